#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    uint32_t sem = get_semaphore(get_compile_time_arg_val(0));
    noc_semaphore_inc<1>(get_noc_addr(0, 0, sem), 1);
    noc_async_atomic_barrier();
}
