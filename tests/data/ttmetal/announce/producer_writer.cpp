// Writes its tiles to an intermediate tensor, then tells the consumer core with a semaphore increment.
// BARRIER_AFTER_INC: the write barrier comes after the announcement, which may overtake the write (tt-metal PR #43507).
// NO_ATOMIC_BARRIER: the increment is still pending when the kernel ends (tt-metal #40879).
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    uint32_t mid_addr = get_arg_val<uint32_t>(0);
    uint32_t num_tiles = get_arg_val<uint32_t>(1);
    uint32_t peer_x = get_arg_val<uint32_t>(2);
    uint32_t peer_y = get_arg_val<uint32_t>(3);
    constexpr uint32_t cb_out = get_compile_time_arg_val(0);
    uint32_t sem_addr = get_semaphore(get_compile_time_arg_val(1));
    const InterleavedAddrGenFast<true> s = {.bank_base_address = mid_addr, .page_size = 2048};

    for (uint32_t i = 0; i < num_tiles; i++) {
        cb_wait_front(cb_out, 1);
        noc_async_write_tile(i, s, get_read_ptr(cb_out));
        noc_async_writes_flushed();
        cb_pop_front(cb_out, 1);
    }
#ifndef BARRIER_AFTER_INC
    noc_async_write_barrier();
#endif
    uint64_t peer_sem = get_noc_addr(peer_x, peer_y, sem_addr);
    noc_semaphore_inc(peer_sem, 1);
#ifdef BARRIER_AFTER_INC
    noc_async_write_barrier();
#endif
#ifndef NO_ATOMIC_BARRIER
    noc_async_atomic_barrier();
#endif
}
