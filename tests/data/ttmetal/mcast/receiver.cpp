// Says it is ready, waits for the sender's flag, then publishes the multicast tile. NO_FLAG_RESET: the flag is
// never set back to INVALID, so from the second block on the wait returns at once.
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    uint32_t num_blocks = get_arg_val<uint32_t>(0);
    uint32_t sender_x = get_arg_val<uint32_t>(1);
    uint32_t sender_y = get_arg_val<uint32_t>(2);
    constexpr uint32_t cb = 16;
    uint32_t sender_sem_addr = get_semaphore(get_compile_time_arg_val(0));
    volatile tt_l1_ptr uint32_t* receiver_sem =
        reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(get_compile_time_arg_val(1)));
    uint64_t sender_sem_noc = get_noc_addr(sender_x, sender_y, sender_sem_addr);

    for (uint32_t b = 0; b < num_blocks; b++) {
        cb_reserve_back(cb, 1);
#ifndef NO_FLAG_RESET
        noc_semaphore_set(receiver_sem, INVALID);
#endif
        noc_semaphore_inc(sender_sem_noc, 1);
        noc_semaphore_wait(receiver_sem, VALID);
        cb_push_back(cb, 1);
    }
    noc_async_atomic_barrier();
}
