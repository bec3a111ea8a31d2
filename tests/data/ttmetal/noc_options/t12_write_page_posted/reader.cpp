#include "api/dataflow/dataflow_api.h"
#include "api/dataflow/noc.h"
#include "api/dataflow/dataflow_buffer.h"
void kernel_main() {
    const uint32_t src_addr = get_arg(args::src_addr);
    const uint32_t n = get_arg(args::n);
    constexpr auto src_args = TensorAccessorArgs<0>();
    Noc noc;
    DataflowBuffer dfb(dfb::in);
    const auto s = TensorAccessor(src_args, src_addr);
    for (uint32_t i = 0; i < n; ++i) {
        dfb.reserve_back(1);
        noc.async_read(s, dfb, 2048, {.page_id = i}, {});
        noc.async_read_barrier();
        dfb.push_back(1);
    }
}
