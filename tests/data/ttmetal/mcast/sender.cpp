// Reads a tile per block and multicasts it to the receivers once each has said it is ready (the in0 sender of the
// reuse-multicast matmul, one operand).
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    uint32_t src_addr = get_arg_val<uint32_t>(0);
    uint32_t num_blocks = get_arg_val<uint32_t>(1);
    uint32_t num_dests = get_arg_val<uint32_t>(2);
    uint32_t x0 = get_arg_val<uint32_t>(3);
    uint32_t y0 = get_arg_val<uint32_t>(4);
    uint32_t x1 = get_arg_val<uint32_t>(5);
    uint32_t y1 = get_arg_val<uint32_t>(6);
    constexpr uint32_t cb = 16;
    uint32_t sender_sem_addr = get_semaphore(get_compile_time_arg_val(0));
    uint32_t receiver_sem_addr = get_semaphore(get_compile_time_arg_val(1));
    volatile tt_l1_ptr uint32_t* sender_sem = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(sender_sem_addr);
    volatile tt_l1_ptr uint32_t* receiver_sem = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(receiver_sem_addr);
    const InterleavedAddrGenFast<true> s = {.bank_base_address = src_addr, .page_size = get_tile_size(cb)};

    *receiver_sem = VALID;  // the source word of the flag multicast
    for (uint32_t b = 0; b < num_blocks; b++) {
        cb_reserve_back(cb, 1);
        uint32_t l1 = get_write_ptr(cb);
        noc_async_read_tile(b, s, l1);
        noc_async_read_barrier();
        noc_semaphore_wait(sender_sem, num_dests);
        noc_semaphore_set(sender_sem, 0);
        noc_async_write_multicast(l1, get_noc_multicast_addr(x0, y0, x1, y1, l1), get_tile_size(cb), num_dests);
        noc_semaphore_set_multicast(receiver_sem_addr, get_noc_multicast_addr(x0, y0, x1, y1, receiver_sem_addr),
                                    num_dests);
        cb_push_back(cb, 1);
    }
    noc_async_write_barrier();
}
