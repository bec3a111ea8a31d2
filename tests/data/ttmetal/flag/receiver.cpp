// Waits for the sender's flag and sets it back for the next run.
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    volatile tt_l1_ptr uint32_t* flag =
        reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(get_compile_time_arg_val(0)));
    noc_semaphore_wait(flag, VALID);
    noc_semaphore_set(flag, INVALID);
}
