// Writes every tile of a buffer to a tensor (classic API).
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    uint32_t dst_addr = get_arg_val<uint32_t>(0);
    uint32_t num_tiles = get_arg_val<uint32_t>(1);
    constexpr uint32_t cb = get_compile_time_arg_val(0);
    const InterleavedAddrGenFast<true> s = {.bank_base_address = dst_addr, .page_size = get_tile_size(cb)};
    for (uint32_t i = 0; i < num_tiles; i++) {
        cb_wait_front(cb, 1);
        noc_async_write_tile(i, s, get_read_ptr(cb));
        noc_async_writes_flushed();
        cb_pop_front(cb, 1);
    }
    noc_async_write_barrier();
}
