# A TT-Lang operation whose data-movement kernel spins in a while loop: the front end refuses it by name at line 18
# (tests/test_refusal_reports.py). Keep the lines as they are.
import torch
import ttl
import ttnn


@ttl.operation(grid=(1, 1))
def spin(x: ttnn.Tensor) -> None:
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def read():
        while True:
            with x_dfb.reserve():
                pass

    @ttl.datamovement()
    def write():
        pass


x = ttnn.from_torch(torch.randn((32, 32)), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
spin(x)
