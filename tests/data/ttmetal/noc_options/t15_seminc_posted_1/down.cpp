#include "api/dataflow/dataflow_api.h"
#include "api/semaphore.h"
void kernel_main() {
    Semaphore<> s(get_compile_time_arg_val(0));
    s.wait(1);
}
