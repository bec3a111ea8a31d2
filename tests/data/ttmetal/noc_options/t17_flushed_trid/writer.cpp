#include "api/dataflow/dataflow_api.h"
#include "api/dataflow/noc.h"
#include "api/dataflow/dataflow_buffer.h"
void kernel_main() {
    const uint32_t dst_addr = get_arg(args::dst_addr);
    const uint32_t n = get_arg(args::n);
    constexpr auto dst_args = TensorAccessorArgs<0>();
    Noc noc;
    DataflowBuffer dfb(dfb::in);
    const auto s = TensorAccessor(dst_args, dst_addr);
    for (uint32_t i = 0; i < n; ++i) {
        dfb.wait_front(1);
        noc.async_write(dfb, s, 2048, {}, {.page_id = i});
        noc.async_writes_flushed<NocOptions::TXN_ID>({.trid = 3});
        dfb.pop_front(1);
    }
    noc.async_write_barrier();
}
