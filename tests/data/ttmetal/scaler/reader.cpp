// A reader that first builds a scaler tile in c_2 by stores (ttnn/kernel/dataflow/generate_reduce_scaler.hpp's
// shape), then streams the tensor's tiles into c_0.
#include <stdint.h>
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    uint32_t src_addr = get_arg_val<uint32_t>(0);
    uint32_t num_tiles = get_arg_val<uint32_t>(1);
    uint32_t scaler = get_arg_val<uint32_t>(2);

    cb_reserve_back(2, 1);
    volatile tt_l1_ptr uint32_t* ptr = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_write_ptr(2));
    Noc noc;
    CircularBuffer cb(2);
    noc.async_write_zeros(cb, 2048);
    noc.write_zeros_l1_barrier();
    if (ptr[0] != scaler) {
        for (int j = 0; j < 8; ++j) {
            ptr[j] = scaler;
        }
    }
    cb_push_back(2, 1);

    const InterleavedAddrGenFast<true> s = {
        .bank_base_address = src_addr, .page_size = 2048, .data_format = get_dataformat(0)};
    for (uint32_t i = 0; i < num_tiles; ++i) {
        cb_reserve_back(0, 1);
        noc_async_read_tile(i, s, get_write_ptr(0));
        noc_async_read_barrier();
        cb_push_back(0, 1);
    }
}
