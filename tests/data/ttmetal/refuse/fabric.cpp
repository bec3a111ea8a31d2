#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    constexpr uint32_t cb = 0;
    cb_wait_front(cb, 1);
    fabric_async_write(get_read_ptr(cb), 2048);
    cb_pop_front(cb, 1);
}
