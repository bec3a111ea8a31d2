// A writer whose buffer is the output's L1 shard (OUT_SHARDED in ttnn's unary writer): it waits for the pages compute
// packed and pops them, writing nothing.
#include <stdint.h>
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    uint32_t num_pages = get_arg_val<uint32_t>(0);
    cb_wait_front(tt::CBIndex::c_16, num_pages);
    cb_pop_front(tt::CBIndex::c_16, num_pages);
}
