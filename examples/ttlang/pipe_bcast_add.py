# y = a + c in TT-Lang, c one tile added to every tile of a, on a row of four nodes: node (0, 0) reads c and
# multicasts it through a pipe to the other three (the pattern of tt-lang examples/eltwise_pipe.py); node x adds it to
# the tile columns x, x + 4, ... of a. verispatial reads it without running it:
#
#     verispatial certify examples/ttlang/pipe_bcast_add.py     # proved
#
# The vendor's simulator runs it too (tt-lang-sim examples/ttlang/pipe_bcast_add.py); benchmarks/ttlang_differential.py
# mutates it (pipe endpoints moved, buffers shrunk, loops off by one, ...) and runs both.
import torch
import ttl
import ttnn

TILE = 32


@ttl.operation(grid=(4, 1))
def pipe_bcast_add(c: ttnn.Tensor, a: ttnn.Tensor, y: ttnn.Tensor) -> None:
    grid_cols, _ = ttl.grid_size(dims=2)
    rows = a.shape[0] // TILE
    cols = a.shape[1] // TILE // grid_cols  # tile columns per node
    net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(slice(1, 4), 0))])
    c_dfb = ttl.make_dataflow_buffer_like(c, shape=(1, 1), block_count=1)
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def read():
        x, _ = ttl.node(dims=2)
        with c_dfb.reserve() as c_blk:

            def send(pipe):
                tx = ttl.copy(c[0:1, 0:1], c_blk)
                tx.wait()
                xf = ttl.copy(c_blk, pipe)
                xf.wait()

            def recv(pipe):
                xf = ttl.copy(pipe, c_blk)
                xf.wait()

            net.if_src(send)
            net.if_dst(recv)
        for r in range(rows):
            for j in range(cols):
                with a_dfb.reserve() as a_blk:
                    tx = ttl.copy(a[r, j * grid_cols + x], a_blk)
                    tx.wait()

    @ttl.compute()
    def add():
        with c_dfb.wait() as c_blk:
            for _ in range(rows):
                for _ in range(cols):
                    with a_dfb.wait() as a_blk, y_dfb.reserve() as y_blk:
                        y_blk.store(a_blk + c_blk)

    @ttl.datamovement()
    def write():
        x, _ = ttl.node(dims=2)
        for r in range(rows):
            for j in range(cols):
                with y_dfb.wait() as y_blk:
                    tx = ttl.copy(y_blk, y[r, j * grid_cols + x])
                    tx.wait()


R, C = 128, 256
c_t = torch.randn((32, 32), dtype=torch.bfloat16)
a_t = torch.randn((R, C), dtype=torch.bfloat16)
c = ttnn.from_torch(c_t, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
a = ttnn.from_torch(a_t, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
y = ttnn.from_torch(torch.zeros((R, C), dtype=torch.bfloat16), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
pipe_bcast_add(c, a, y)
expected = a_t.float() + c_t[:32, :32].float().repeat(-(-R // 32), -(-C // 32))[:R, :C]
assert torch.allclose(ttnn.to_torch(y).float(), expected, rtol=1e-2, atol=1e-2), "Tensors do not match"
