// A reader whose buffer is the input's L1 shard (IN0_SHARDED in ttnn's binary reader): it publishes the whole shard
// with no data movement.
#include <stdint.h>
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    uint32_t num_tiles = get_arg_val<uint32_t>(0);
    cb_reserve_back(tt::CBIndex::c_0, num_tiles);
    cb_push_back(tt::CBIndex::c_0, num_tiles);
}
