// Scale every tile of c_0 by the scaler tile of c_2, waited once and never popped (softmax's and reduce's constant
// tiles are used so).
#include <cstdint>
#include "api/compute/eltwise_binary.h"

void kernel_main() {
    uint32_t num_tiles = get_arg_val<uint32_t>(0);
    cb_wait_front(2, 1);
    for (uint32_t i = 0; i < num_tiles; ++i) {
        cb_wait_front(0, 1);
        cb_reserve_back(16, 1);
        tile_regs_acquire();
        mul_tiles(0, 2, 0, 0, 0);
        tile_regs_commit();
        tile_regs_wait();
        pack_tile(0, 16);
        tile_regs_release();
        cb_pop_front(0, 1);
#ifdef POP_SCALER
        cb_pop_front(2, 1);  // the scaler freed after its first use: the next tile reads a page no longer waited
#endif
        cb_push_back(16, 1);
    }
}
