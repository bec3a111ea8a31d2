// A Metal 2.0 writer: DataflowBuffer, Noc and TensorAccessor objects. NO_LAST_POP: it never frees its
// last page (the kind of PR #46658).
#include "api/dataflow/dataflow_api.h"
#include "api/dataflow/noc.h"
#include "api/dataflow/dataflow_buffer.h"

void kernel_main() {
    const uint32_t dst_addr = get_arg(args::dst_addr);
    const uint32_t num_pages = get_arg(args::num_pages);
    const uint32_t start_id = get_arg(args::start_id);
    constexpr auto dst_args = TensorAccessorArgs<0>();
    const uint32_t page_bytes = get_local_cb_interface(16).fifo_page_size;

    Noc noc;
    DataflowBuffer dfb(dfb::out);
    const auto s = TensorAccessor(dst_args, dst_addr);
    uint32_t end_id = start_id + num_pages;
    for (uint32_t i = start_id; i < end_id; ++i) {
        dfb.wait_front(1);
        noc.async_write(dfb, s, page_bytes, {}, {.page_id = i});
        noc.async_writes_flushed();
#ifdef NO_LAST_POP
        if (i + 1 != end_id)
#endif
        dfb.pop_front(1);
    }
    noc.async_write_barrier();
}
