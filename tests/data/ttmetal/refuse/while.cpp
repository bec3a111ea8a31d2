#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    volatile uint32_t* flag = reinterpret_cast<volatile uint32_t*>(get_write_ptr(0));
    constexpr uint32_t cb = 0;
    while (*flag == 0) {  // a word another core writes: not a value the reading follows
        cb_reserve_back(cb, 1);
        cb_push_back(cb, 1);
    }
}
