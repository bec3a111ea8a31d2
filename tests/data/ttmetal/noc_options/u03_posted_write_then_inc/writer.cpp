#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    const uint32_t dst_addr = get_arg_val<uint32_t>(0);
    const uint32_t start = get_arg_val<uint32_t>(1);
    const InterleavedAddrGenFast<true> s = {.bank_base_address = dst_addr, .page_size = 2048, .data_format = DataFormat::Float16_b};
    for (uint32_t i = 0; i < 4; ++i) {
        cb_wait_front(0, 1);
        noc_async_write_tile(start + i, s, get_read_ptr(0));
        noc_async_write_barrier();
        cb_pop_front(0, 1);
    }
}
