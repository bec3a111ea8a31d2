#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    uint32_t ready_addr = get_semaphore(get_compile_time_arg_val(0));
    uint32_t data_addr = get_semaphore(get_compile_time_arg_val(1));
    volatile tt_l1_ptr uint32_t* data = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(data_addr);
    for (uint32_t i = 0; i < 4; ++i) {
        cb_reserve_back(0, 1);
        noc_semaphore_inc(get_noc_addr(0, 0, ready_addr), 1);
        noc_semaphore_wait_min(data, i + 1);
        cb_push_back(0, 1);
    }
    noc_async_atomic_barrier();
}
