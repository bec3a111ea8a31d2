// Multicasts a VALID flag to the receivers' word and waits for its acknowledgements before setting its source word
// back (a release of the reuse-multicast matmul). The rectangle's corners and the destination count are runtime
// args: on NoC 0 the corners run start <= end, on NoC 1 end <= start (get_safe_multicast_noc_addr's swap).
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    uint32_t num_dests = get_arg_val<uint32_t>(0);
    uint32_t x0 = get_arg_val<uint32_t>(1);
    uint32_t y0 = get_arg_val<uint32_t>(2);
    uint32_t x1 = get_arg_val<uint32_t>(3);
    uint32_t y1 = get_arg_val<uint32_t>(4);
    uint32_t flag_addr = get_semaphore(get_compile_time_arg_val(0));
    volatile tt_l1_ptr uint32_t* flag = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(flag_addr);

    noc_semaphore_set(flag, VALID);
    noc_semaphore_set_multicast(flag_addr, get_noc_multicast_addr(x0, y0, x1, y1, flag_addr), num_dests);
    noc_async_write_barrier();
    noc_semaphore_set(flag, INVALID);
}
