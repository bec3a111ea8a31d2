import torch
import ttl
import ttnn

TILE = 32


@ttl.operation(grid=(4, 1))
def bcast_add(c, a, y):
    # node (0, 0) reads c's tile and multicasts it to every other node; each node adds it to its column of a
    net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(slice(1, 4), 0))])
    c_dfb = ttl.make_dataflow_buffer_like(c, shape=(1, 1), block_count=2)
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)
    rows = a.shape[0] // TILE

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
            with a_dfb.reserve() as a_blk:
                tx = ttl.copy(a[r, x], a_blk)
                tx.wait()

    @ttl.compute()
    def compute():
        with c_dfb.wait() as c_blk:
            for _ in range(rows):
                with a_dfb.wait() as a_blk, y_dfb.reserve() as y_blk:
                    y_blk.store(a_blk + c_blk)

    @ttl.datamovement()
    def write():
        x, _ = ttl.node(dims=2)
        for r in range(rows):
            with y_dfb.wait() as y_blk:
                tx = ttl.copy(y_blk, y[r, x])
                tx.wait()


c = ttnn.from_torch(torch.randn((32, 32)), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
a = ttnn.from_torch(torch.randn((128, 128)), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
y = ttnn.from_torch(torch.zeros((128, 128)), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
bcast_add(c, a, y)
