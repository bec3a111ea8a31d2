// A constant tile filled by plain L1 stores (a reduce scaler): not in the IR yet (issue 16).
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    constexpr uint32_t cb_scaler = 0;
    cb_reserve_back(cb_scaler, 1);
    volatile tt_l1_ptr uint32_t* ptr = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_write_ptr(cb_scaler));
    for (uint32_t k = 0; k < 512; k++) {
        ptr[k] = 0x3f803f80;
    }
    cb_push_back(cb_scaler, 1);
}
