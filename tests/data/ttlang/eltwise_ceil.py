# tests/data/ttlang/eltwise.py with the pattern of the tutorials' step 4: each node of the 2x1 grid takes
# ceil(blocks / 2) block rows and guards the trailing ones with `if row < blocks`. The tests range R over shapes the
# two nodes do not divide evenly.
import torch
import ttl
import ttnn

TILE = 32
ROWS = 4


@ttl.operation(grid=(2, 1))
def eltwise(a: ttnn.Tensor, b: ttnn.Tensor, y: ttnn.Tensor) -> None:
    cols = a.shape[1] // TILE
    grid_cols, _ = ttl.grid_size(dims=2)
    blocks = a.shape[0] // TILE // ROWS
    per_node = -(-blocks // grid_cols)

    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(ROWS, 1), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(ROWS, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(ROWS, 1), block_count=2)

    @ttl.datamovement()
    def read():
        node_col, _ = ttl.node(dims=2)
        for i in range(per_node):
            row = node_col * per_node + i
            if row < blocks:
                for c in range(cols):
                    with a_dfb.reserve() as a_blk, b_dfb.reserve() as b_blk:
                        tx_a = ttl.copy(a[row * ROWS:(row + 1) * ROWS, c], a_blk)
                        tx_b = ttl.copy(b[row * ROWS:(row + 1) * ROWS, c], b_blk)
                        tx_a.wait()
                        tx_b.wait()

    @ttl.compute()
    def compute():
        node_col, _ = ttl.node(dims=2)
        for i in range(per_node):
            row = node_col * per_node + i
            if row < blocks:
                for _ in range(cols):
                    with a_dfb.wait() as a_blk, b_dfb.wait() as b_blk, y_dfb.reserve() as y_blk:
                        y_blk.store(a_blk * b_blk + 1.0)

    @ttl.datamovement()
    def write():
        node_col, _ = ttl.node(dims=2)
        for i in range(per_node):
            row = node_col * per_node + i
            if row < blocks:
                for c in range(cols):
                    with y_dfb.wait() as y_blk:
                        tx = ttl.copy(y_blk, y[row * ROWS:(row + 1) * ROWS, c])
                        tx.wait()


R, C = 256, 64
a = ttnn.from_torch(torch.randn((R, C)), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
b = ttnn.from_torch(torch.randn((R, C)), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
y = ttnn.from_torch(torch.zeros((R, C)), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
eltwise(a, b, y)
