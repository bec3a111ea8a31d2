import torch
import ttl
import ttnn

TILE = 32


@ttl.operation(grid=(2, 1))
def dbl(a: ttnn.Tensor, y: ttnn.Tensor) -> None:
    grid_cols, _ = ttl.grid_size(dims=2)
    rows = a.shape[0] // TILE // grid_cols
    cols = a.shape[1] // TILE
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def read():
        node, _ = ttl.node(dims=2)
        for i in range(rows):
            r = node * rows + i
            for j in range(cols):
                with a_dfb.reserve() as blk:
                    tx = ttl.copy(a[r:r + 1, j:j + 1], blk)
                    tx.wait()

    @ttl.compute()
    def compute():
        for _ in range(rows):
            for _ in range(cols):
                with a_dfb.wait() as a_blk:
                    with y_dfb.reserve() as y_blk:
                        y_blk.store(a_blk + a_blk)

    @ttl.datamovement()
    def write():
        node, _ = ttl.node(dims=2)
        for i in range(rows):
            r = node * rows + i
            for j in range(cols):
                with y_dfb.wait() as blk:
                    tx = ttl.copy(blk, y[r:r + 1, j:j + 1])
                tx.wait()


a = ttnn.from_torch(torch.randn((128, 64), dtype=torch.bfloat16), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
y = ttnn.from_torch(torch.zeros((128, 64)), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
dbl(a, y)
