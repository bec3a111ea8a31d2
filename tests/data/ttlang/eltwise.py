# A TT-Lang elementwise y = a * b + 1 over row blocks spread across a 2x1 grid, with the explicit
# reserve/push and wait/pop forms in the reader. The tests mutate this text: keep the marked lines as they are.
import torch
import ttl
import ttnn

TILE = 32
ROWS = 4


@ttl.operation(grid=(2, 1))
def eltwise(a: ttnn.Tensor, b: ttnn.Tensor, y: ttnn.Tensor) -> None:
    cols = a.shape[1] // TILE
    grid_cols, _ = ttl.grid_size(dims=2)
    blocks = a.shape[0] // TILE // ROWS  # reader and compute
    per_node = blocks // grid_cols
    w_blocks = a.shape[0] // TILE // ROWS  # writer
    w_per_node = w_blocks // grid_cols

    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(ROWS, 1), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(ROWS, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(ROWS, 1), block_count=2)

    @ttl.datamovement()
    def read():
        node_col, _ = ttl.node(dims=2)
        for i in range(per_node):
            r = (node_col * per_node + i) * ROWS
            for c in range(cols):
                a_blk = a_dfb.reserve()
                b_blk = b_dfb.reserve()
                tx_a = ttl.copy(a[r:r + ROWS, c], a_blk)
                tx_b = ttl.copy(b[r:r + ROWS, c], b_blk)
                tx_a.wait()
                tx_b.wait()  # b wait
                a_blk.push()
                b_blk.push()

    @ttl.compute()
    def compute():
        for _ in range(per_node):
            for _ in range(cols):
                with a_dfb.wait() as a_blk, b_dfb.wait() as b_blk, y_dfb.reserve() as y_blk:
                    y_blk.store(a_blk * b_blk + 1.0)

    @ttl.datamovement()
    def write():
        node_col, _ = ttl.node(dims=2)
        for i in range(w_per_node):
            r = (node_col * w_per_node + i) * ROWS
            for c in range(cols):
                with y_dfb.wait() as y_blk:
                    tx = ttl.copy(y_blk, y[r:r + ROWS, c])
                    tx.wait()


R, C = 256, 64
a = ttnn.from_torch(torch.randn((R, C)), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
b = ttnn.from_torch(torch.randn((R, C)), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
y = ttnn.from_torch(torch.zeros((R, C)), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
eltwise(a, b, y)
