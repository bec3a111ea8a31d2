# A single-node TT-Lang matmul y = a @ b, K streamed in blocks through an accumulator buffer (after the
# vendor's matmul tutorial, step 2). The tests mutate this text: keep the marked lines as they are.
import torch
import ttl
import ttnn

TILE = 32
BLOCK = 2


@ttl.operation(grid=(1, 1))
def matmul(a: ttnn.Tensor, b: ttnn.Tensor, y: ttnn.Tensor) -> None:
    m_blocks = a.shape[0] // TILE // BLOCK
    n_blocks = b.shape[1] // TILE // BLOCK
    k_blocks = a.shape[1] // TILE // BLOCK

    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(BLOCK, BLOCK), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(BLOCK, BLOCK), block_count=2)
    acc_dfb = ttl.make_dataflow_buffer_like(y, shape=(BLOCK, BLOCK), block_count=2)  # acc
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(BLOCK, BLOCK), block_count=2)

    @ttl.datamovement()
    def read():
        for m in range(m_blocks):
            for n in range(n_blocks):
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
                for _ in range(k_blocks):  # K loop
                    with a_dfb.wait() as a_blk, b_dfb.wait() as b_blk, acc_dfb.wait() as pre:
                        with acc_dfb.reserve() as acc_blk:
                            acc_blk.store(pre + a_blk @ b_blk)
                with acc_dfb.wait() as acc_blk, y_dfb.reserve() as y_blk:
                    y_blk.store(ttl.math.relu(acc_blk))

    @ttl.datamovement()
    def write():
        for m in range(m_blocks):
            for n in range(n_blocks):
                with y_dfb.wait() as y_blk:
                    tx = ttl.copy(y_blk, y[m * BLOCK:(m + 1) * BLOCK, n * BLOCK:(n + 1) * BLOCK])
                    tx.wait()


M, K, N = 128, 256, 128
a = ttnn.from_torch(torch.randn((M, K)), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
b = ttnn.from_torch(torch.randn((K, N)), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
y = ttnn.from_torch(torch.zeros((M, N)), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
matmul(a, b, y)
