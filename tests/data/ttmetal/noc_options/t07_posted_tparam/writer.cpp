#include "api/dataflow/dataflow_api.h"
#include "api/dataflow/noc.h"
#include "api/dataflow/dataflow_buffer.h"
template <NocOptions O>
void put(Noc& noc, DataflowBuffer& dfb, const TensorAccessor<decltype(TensorAccessorArgs<0>())>& s, uint32_t i) {
    noc.async_write<O>(dfb, s, 2048, {}, {.page_id = i});
}
void kernel_main() {
    const uint32_t dst_addr = get_arg(args::dst_addr);
    const uint32_t n = get_arg(args::n);
    constexpr auto dst_args = TensorAccessorArgs<0>();
    Noc noc;
    DataflowBuffer dfb(dfb::in);
    const auto s = TensorAccessor(dst_args, dst_addr);
    for (uint32_t i = 0; i < n; ++i) {
        dfb.wait_front(1);
        put<NocOptions::POSTED>(noc, dfb, s, i);
        noc.async_write_barrier();
        dfb.pop_front(1);
    }
}
