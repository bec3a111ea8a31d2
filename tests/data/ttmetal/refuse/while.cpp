#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    uint32_t num_tiles = get_arg_val<uint32_t>(0);
    constexpr uint32_t cb = 0;
    while (num_tiles > 0) {
        cb_reserve_back(cb, 1);
        cb_push_back(cb, 1);
        num_tiles--;
    }
}
