# Node (0, 0) reads two tiles of a and sends each through a unicast pipe to node (1, 0), which writes them to y.
import torch
import ttl
import ttnn


@ttl.operation(grid=(2, 1))
def forward(a, y):
    net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(1, 0))])
    d = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def read():
        for i in range(2):
            with d.reserve() as blk:

                def send(pipe):
                    tx = ttl.copy(a[i, 0], blk)  # noqa: B023 (called in this iteration)
                    tx.wait()
                    xf = ttl.copy(blk, pipe)
                    xf.wait()

                def recv(pipe):
                    xf = ttl.copy(pipe, blk)
                    xf.wait()

                net.if_src(send)
                net.if_dst(recv)

    @ttl.datamovement()
    def write():
        x, _ = ttl.node(dims=2)
        for i in range(2):
            with d.wait() as blk:
                if x == 1:
                    tx = ttl.copy(blk, y[i, 0])
                    tx.wait()


a = ttnn.from_torch(torch.randn((64, 32)), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
y = ttnn.from_torch(torch.zeros((64, 32)), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
forward(a, y)
