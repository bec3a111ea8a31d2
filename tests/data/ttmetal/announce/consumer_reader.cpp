// Waits for the producer core's announcement, then reads the intermediate tensor.
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    uint32_t mid_addr = get_arg_val<uint32_t>(0);
    uint32_t num_tiles = get_arg_val<uint32_t>(1);
    constexpr uint32_t cb_in = get_compile_time_arg_val(0);
    volatile tt_l1_ptr uint32_t* sem = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(
        get_semaphore(get_compile_time_arg_val(1)));
    const InterleavedAddrGenFast<true> s = {.bank_base_address = mid_addr, .page_size = 2048};

    noc_semaphore_wait(sem, 1);
    for (uint32_t i = 0; i < num_tiles; i++) {
        cb_reserve_back(cb_in, 1);
        noc_async_read_tile(i, s, get_write_ptr(cb_in));
        noc_async_read_barrier();
        cb_push_back(cb_in, 1);
    }
}
