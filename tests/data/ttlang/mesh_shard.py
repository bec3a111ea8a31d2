# An SPMD operation over a 1-D mesh of devices, as the multi-device tutorials spread it: every device runs y = a + b
# on its own rows of a and y (ShardTensorToMesh along dim 0) with all of b (ReplicateTensorToMesh). The device
# count is the machine's (ttnn.GetNumAvailableDevices()): verispatial needs it given (--devices N) to know the
# per-device shapes. The tests mutate this text: keep the marked lines as they are.
import torch
import ttl
import ttnn

TILE = 32


@ttl.operation(grid=(1, 1))
def add(a: ttnn.Tensor, b: ttnn.Tensor, y: ttnn.Tensor) -> None:
    rows = a.shape[0] // TILE
    cols = a.shape[1] // TILE
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def read():
        for r in range(rows):
            for c in range(cols):
                with a_dfb.reserve() as a_blk, b_dfb.reserve() as b_blk:
                    tx_a = ttl.copy(a[r, c], a_blk)
                    tx_b = ttl.copy(b[r, c], b_blk)
                    tx_a.wait()
                    tx_b.wait()

    @ttl.compute()
    def compute():
        for _ in range(rows):
            for _ in range(cols):
                with a_dfb.wait() as a_blk, b_dfb.wait() as b_blk, y_dfb.reserve() as y_blk:
                    y_blk.store(a_blk + b_blk)

    @ttl.datamovement()
    def write():
        for r in range(rows):
            for c in range(cols):
                with y_dfb.wait() as y_blk:
                    tx = ttl.copy(y_blk, y[r, c])
                    tx.wait()


n_devices = ttnn.GetNumAvailableDevices()
mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, n_devices))  # mesh
shard = ttnn.ShardTensorToMesh(mesh, dim=0)
R, C = 256, 64
a = ttnn.from_torch(torch.randn((R, C)), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, mesh_mapper=shard)
b = ttnn.from_torch(torch.randn((R // n_devices, C)), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT,
                    mesh_mapper=ttnn.ReplicateTensorToMesh(mesh))
y = ttnn.from_torch(torch.zeros((R, C)), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, mesh_mapper=shard)
add(a, b, y)
