// Helpers of the op, included by writer_last_barrier.cpp.
#pragma once
#include "api/dataflow/dataflow_api.h"

namespace helpers {
inline void write_front_tile(uint32_t cb, const InterleavedAddrGenFast<true>& s, uint32_t tile) {
    noc_async_write_tile(tile, s, get_read_ptr(cb));
}
}  // namespace helpers
