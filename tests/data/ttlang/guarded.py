# A row of blocks y[i] = x[i] + b, where the bias block b is read once, in the first iteration, and held by the
# compute kernel to the last (TT-Lang `if` on the loop index: the IR's first/last guards).
import torch
import ttl
import ttnn

TILE = 32


@ttl.operation(grid=(1, 1))
def guarded(x: ttnn.Tensor, b: ttnn.Tensor, y: ttnn.Tensor) -> None:
    n = x.shape[1] // TILE
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=1)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def read():
        for i in range(n):
            if i == 0:
                with b_dfb.reserve() as b_blk:
                    tx = ttl.copy(b[0, 0], b_blk)
                    tx.wait()
            with x_dfb.reserve() as x_blk:
                tx = ttl.copy(x[0, i], x_blk)
                tx.wait()

    @ttl.compute()
    def compute():
        for i in range(n):
            if i == 0:
                b_blk = b_dfb.wait()
            with x_dfb.wait() as x_blk, y_dfb.reserve() as y_blk:
                y_blk.store(x_blk + b_blk)
            if i == n - 1:  # last
                b_blk.pop()

    @ttl.datamovement()
    def write():
        for i in range(n):
            with y_dfb.wait() as y_blk:
                tx = ttl.copy(y_blk, y[0, i])
                tx.wait()


x = ttnn.from_torch(torch.randn((32, 256)), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
b = ttnn.from_torch(torch.randn((32, 32)), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
y = ttnn.from_torch(torch.zeros((32, 256)), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
guarded(x, b, y)
