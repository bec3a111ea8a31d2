// A compute kernel copying c_0 to c_16 a block of tiles at a time.
#include <cstdint>
#include "api/compute/tile_move_copy.h"

void kernel_main() {
    uint32_t per_core_block_cnt = get_arg_val<uint32_t>(0);
    constexpr uint32_t block = get_compile_time_arg_val(0);
    copy_tile_to_dst_init_short(tt::CBIndex::c_0);
    for (uint32_t b = 0; b < per_core_block_cnt; ++b) {
        cb_wait_front(tt::CBIndex::c_0, block);
        cb_reserve_back(tt::CBIndex::c_16, block);
        tile_regs_acquire();
        for (uint32_t i = 0; i < block; ++i) {
            copy_tile(tt::CBIndex::c_0, i, i);
        }
        tile_regs_commit();
        tile_regs_wait();
        for (uint32_t i = 0; i < block; ++i) {
            pack_tile(i, tt::CBIndex::c_16);
        }
        tile_regs_release();
        cb_pop_front(tt::CBIndex::c_0, block);
        cb_push_back(tt::CBIndex::c_16, block);
    }
}
