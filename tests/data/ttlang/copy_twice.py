import torch
import ttl
import ttnn

TILE = 32


@ttl.operation(grid=(1, 1))
def expop(a: ttnn.Tensor, y: ttnn.Tensor) -> None:
    rows = a.shape[0] // TILE
    cols = a.shape[1] // TILE
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def read():
        for r in range(rows):
            for c in range(cols):
                with a_dfb.reserve() as blk:
                    tx = ttl.copy(a[r, c], blk)
                    tx.wait()
                    tx2 = ttl.copy(a[r, c], blk)
                    tx2.wait()

    @ttl.compute()
    def comp():
        for _ in range(rows):
            for _ in range(cols):
                with a_dfb.wait() as ab, y_dfb.reserve() as yb:
                    yb.store(ttl.math.exp(ab))

    @ttl.datamovement()
    def write():
        for r in range(rows):
            for c in range(cols):
                with y_dfb.wait() as blk:
                    tx = ttl.copy(blk, y[r, c])
                    tx.wait()


a = ttnn.from_torch(torch.randn((64, 96)), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
y = ttnn.from_torch(torch.zeros((64, 96)), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
expop(a, y)
