// A writer that flushes after each tile and waits for the acknowledgements only after the last one.
#include "api/dataflow/dataflow_api.h"
#include "writer_helpers.hpp"

void kernel_main() {
    uint32_t dst_addr = get_arg_val<uint32_t>(0);
    uint32_t num_tiles = get_arg_val<uint32_t>(1);
    constexpr uint32_t cb = get_compile_time_arg_val(0);
    const InterleavedAddrGenFast<true> s = {.bank_base_address = dst_addr, .page_size = get_tile_size(cb)};
    auto done = [&](uint32_t i) { return i + 1 == num_tiles; };
    for (uint32_t i = 0; i < num_tiles; i++) {
        cb_wait_front(cb, 1);
        helpers::write_front_tile(cb, s, i);
        if (!done(i)) {
            noc_async_writes_flushed();
        } else {
            noc_async_write_barrier();
        }
        cb_pop_front(cb, 1);
    }
}
