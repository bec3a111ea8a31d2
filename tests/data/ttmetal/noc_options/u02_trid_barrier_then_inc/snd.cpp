#include "api/dataflow/dataflow_api.h"
#include "api/dataflow/noc.h"
void kernel_main() {
    uint32_t src_addr = get_arg_val<uint32_t>(0);
    uint32_t ready_addr = get_semaphore(get_compile_time_arg_val(0));
    uint32_t data_addr = get_semaphore(get_compile_time_arg_val(1));
    volatile tt_l1_ptr uint32_t* ready = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(ready_addr);
    const InterleavedAddrGenFast<true> s = {.bank_base_address = src_addr, .page_size = 2048, .data_format = DataFormat::Float16_b};
    Noc noc;
    for (uint32_t i = 0; i < 4; ++i) {
        cb_reserve_back(0, 1);
        uint32_t l1 = get_write_ptr(0);
        noc_async_read_tile(i, s, l1);
        noc_async_read_barrier();
        noc_semaphore_wait_min(ready, i + 1);
        noc_async_write(l1, get_noc_addr(1, 0, l1), 2048);
        noc.async_write_barrier<NocOptions::TXN_ID>({.trid = 2});
        noc_semaphore_inc(get_noc_addr(1, 0, data_addr), 1);
        noc_async_atomic_barrier();
        cb_push_back(0, 1);
    }
    noc_async_write_barrier();
}
