# The N-sharded all-gather matmul of tt-lang #1037 (reduced): four devices in a 1x4 mesh, one node each. Device d
# holds x's K shard d and w's N shard d (every K row of it) and computes y = x_full @ w: per output row block m and
# column block n it gathers the four K blocks of row m (its own read from DRAM, the three others received through
# pipes from the other devices) and accumulates them in K order. Activations are streamed, not cached: every N
# round receives them again, through finite dataflow buffers (act[s] holds the block of K shard s).
#
# The deadlock (tt-lang #1037: "PipeNet schedule verification misses finite-capacity DFB deadlock across kernel
# threads"): share_and_write streams every round's activation block to the other devices before it writes any
# output. After two rounds y_dfb is full, so compute stops at the third round's y_dfb.reserve and pops no more
# activation blocks; share_and_write's act[dev].reserve for the fifth round waits for a pop only compute can give,
# and never reaches the y_dfb pops compute waits for. Every device hangs so, and the other devices' gathers with it. TT-Lang's
# own verifier models the pipes' post / send / completion dependencies but not the dependency of a blocked
# reservation on the pop that returns capacity, so it accepts this schedule. Written from the description
# (its reproducer is a gist), reduced to one node per device. allgather_matmul_1037_fixed.py writes each round's
# output right after its send and proves.
#
#     verispatial certify examples/ttlang/allgather_matmul_1037.py        # refuted: the deadlock of #1037
#     verispatial certify examples/ttlang/allgather_matmul_1037_fixed.py  # proved
import torch
import ttl
import ttnn

DEVICES = 4
ACT_BLOCKS = 1  # blocks per activation buffer


@ttl.operation(grid=(1, DEVICES, 1, 1))
def allgather_matmul(x, w, y):
    m_blocks = x.shape[0] // 32
    n_blocks = y.shape[1] // 32
    # one pipe per ordered pair of devices: device d's K shard to device (d + s) % DEVICES
    net = ttl.PipeNet([ttl.Pipe(src=(0, d, 0, 0), dst=(0, (d + s) % DEVICES, 0, 0))
                       for s in range(1, DEVICES) for d in range(DEVICES)])
    act = [ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=ACT_BLOCKS) for _ in range(DEVICES)]
    w_dfb = ttl.make_dataflow_buffer_like(w, shape=(1, 1), block_count=2)
    acc_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def gather():
        for m in range(m_blocks):
            for n in range(n_blocks):
                # receive the other devices' K blocks of row m, nearest device first (the net's order)
                def recv(pipe):
                    _, src, _, _ = pipe.src
                    with act[src].reserve() as blk:
                        xf = ttl.copy(pipe, blk)
                        xf.wait()

                net.if_dst(recv)
                # and the weights of column block n, in K order
                for k in range(DEVICES):
                    with w_dfb.reserve() as wb:
                        tx = ttl.copy(w[k, n], wb)
                        tx.wait()

    @ttl.compute()
    def matmul():
        for _ in range(m_blocks):
            for _ in range(n_blocks):
                with acc_dfb.reserve() as acc:
                    acc.store(ttl.block.fill(0, shape=acc.shape))
                with act[0].wait() as a, w_dfb.wait() as wb, acc_dfb.wait() as pre:  # K shard 0
                    with acc_dfb.reserve() as acc:
                        acc.store(pre + a @ wb)
                with act[1].wait() as a, w_dfb.wait() as wb, acc_dfb.wait() as pre:  # K shard 1
                    with acc_dfb.reserve() as acc:
                        acc.store(pre + a @ wb)
                with act[2].wait() as a, w_dfb.wait() as wb, acc_dfb.wait() as pre:  # K shard 2
                    with acc_dfb.reserve() as acc:
                        acc.store(pre + a @ wb)
                with act[3].wait() as a, w_dfb.wait() as wb, acc_dfb.wait() as pre:  # K shard 3
                    with acc_dfb.reserve() as acc:
                        acc.store(pre + a @ wb)
                with acc_dfb.wait() as acc, y_dfb.reserve() as out:
                    out.store(acc)

    @ttl.datamovement()
    def share_and_write():
        _, dev, _, _ = ttl.node(dims=4)
        # stream this device's K block of every round to the other devices first ...
        for m in range(m_blocks):
            for n in range(n_blocks):
                with act[dev].reserve() as blk:
                    tx = ttl.copy(x[m, 0], blk)
                    tx.wait()

                    def send(pipe):
                        xf = ttl.copy(blk, pipe)
                        xf.wait()

                    net.if_src(send)
        # ... then write the output blocks
        for m in range(m_blocks):
            for n in range(n_blocks):
                with y_dfb.wait() as out:
                    tx = ttl.copy(out, y[m, n])
                    tx.wait()

x = ttnn.from_torch(torch.randn((64, 32)), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
w = ttnn.from_torch(torch.randn((128, 96)), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
y = ttnn.from_torch(torch.zeros((64, 96)), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
allgather_matmul(x, w, y)
