# y = relu(a @ b + c) in TT-Lang, on a 2x1 grid of nodes: each node computes its rows of y, streaming K in blocks
# through a double-buffered accumulator. verispatial reads it without running it:
#
#     verispatial certify examples/ttlang/matmul_bias_relu.py
#     verispatial certify examples/ttlang/matmul_bias_relu.py --range K=128:4096:64   # every K at once
import torch
import ttl
import ttnn

TILE = 32
BLOCK = 2


@ttl.operation(grid=(2, 1))
def matmul_bias_relu(a: ttnn.Tensor, b: ttnn.Tensor, c: ttnn.Tensor, y: ttnn.Tensor) -> None:
    grid_cols, _ = ttl.grid_size(dims=2)
    m_blocks = a.shape[0] // TILE // BLOCK // grid_cols  # per node
    n_blocks = b.shape[1] // TILE // BLOCK
    k_blocks = a.shape[1] // TILE // BLOCK

    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(BLOCK, BLOCK), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(BLOCK, BLOCK), block_count=2)
    c_dfb = ttl.make_dataflow_buffer_like(c, shape=(BLOCK, BLOCK), block_count=2)
    acc_dfb = ttl.make_dataflow_buffer_like(y, shape=(BLOCK, BLOCK), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(BLOCK, BLOCK), block_count=2)

    @ttl.datamovement()
    def read():
        node, _ = ttl.node(dims=2)
        for i in range(m_blocks):
            m = node * m_blocks + i
            for n in range(n_blocks):
                with c_dfb.reserve() as c_blk:
                    tx = ttl.copy(c[m * BLOCK:(m + 1) * BLOCK, n * BLOCK:(n + 1) * BLOCK], c_blk)
                    tx.wait()
                for k in range(k_blocks):
                    with a_dfb.reserve() as a_blk, b_dfb.reserve() as b_blk:
                        tx_a = ttl.copy(a[m * BLOCK:(m + 1) * BLOCK, k * BLOCK:(k + 1) * BLOCK], a_blk)
                        tx_b = ttl.copy(b[k * BLOCK:(k + 1) * BLOCK, n * BLOCK:(n + 1) * BLOCK], b_blk)
                        tx_a.wait()
                        tx_b.wait()

    @ttl.compute()
    def compute():
        for _ in range(m_blocks):
            for _ in range(n_blocks):
                with acc_dfb.reserve() as acc_blk:
                    acc_blk.store(ttl.block.fill(0, shape=acc_blk.shape))
                for _ in range(k_blocks):
                    with a_dfb.wait() as a_blk, b_dfb.wait() as b_blk, acc_dfb.wait() as pre:
                        with acc_dfb.reserve() as acc_blk:
                            acc_blk.store(pre + a_blk @ b_blk)
                with c_dfb.wait() as c_blk, acc_dfb.wait() as acc_blk:
                    with y_dfb.reserve() as y_blk:
                        y_blk.store(ttl.math.relu(c_blk + acc_blk))

    @ttl.datamovement()
    def write():
        node, _ = ttl.node(dims=2)
        for i in range(m_blocks):
            m = node * m_blocks + i
            for n in range(n_blocks):
                with y_dfb.wait() as y_blk:
                    tx = ttl.copy(y_blk, y[m * BLOCK:(m + 1) * BLOCK, n * BLOCK:(n + 1) * BLOCK])
                    tx.wait()


M, K, N = 256, 512, 128
a_t = torch.randn((M, K), dtype=torch.bfloat16)
b_t = torch.randn((K, N), dtype=torch.bfloat16)
c_t = torch.randn((M, N), dtype=torch.bfloat16)
a = ttnn.from_torch(a_t, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
b = ttnn.from_torch(b_t, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
c = ttnn.from_torch(c_t, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
y = ttnn.from_torch(torch.zeros((M, N)), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
matmul_bias_relu(a, b, c, y)
# the result, as the vendor's tutorials check theirs (run by tt-lang-sim; verispatial reads only the shapes above)
expected = torch.relu(a_t.float() @ b_t.float() + c_t.float())
pcc = torch.corrcoef(torch.stack([ttnn.to_torch(y).flatten().float(), expected.flatten()]))[0, 1].item()
assert pcc > 0.99, f"PCC {pcc:.4f}"
