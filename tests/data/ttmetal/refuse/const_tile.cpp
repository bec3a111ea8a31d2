// Stores into a reserved page that no push publishes (scratch use of a buffer's back): the choreography cannot say
// where the stores go, so the reading refuses them at the first store rather than drop them.
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    constexpr uint32_t cb_scaler = 0;
    cb_reserve_back(cb_scaler, 1);
    volatile tt_l1_ptr uint32_t* ptr = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_write_ptr(cb_scaler));
    for (uint32_t k = 0; k < 512; k++) {
        ptr[k] = 0x3f803f80;
    }
}
