// Argument checks of the public collectives: each failure names the argument and value.
#pragma once
#include <cstddef>
#include <span>

#include "chorus/types.h"
#include "util/status.h"

namespace chorus::api {

Status check_dtype(DataType dtype);
Status check_op(ReduceOp op);
// count * multiplier * dtype size must fit in an address space (<= 2^47 bytes, no overflow).
Status check_count(const char* name, std::size_t count, DataType dtype, std::size_t multiplier);
// A buffer that must be non-null when `count` > 0.
Status check_buffer(const char* name, const void* buf, std::size_t count);
Status check_rank(const char* name, int value, int size);
// Checks a per-rank span of all_to_all_v: size() entries, each block inside the buffer
// arithmetic (count + displacement does not overflow). `total` gets the buffer extent.
Status check_v_spans(const char* counts_name, std::span<const std::size_t> counts,
                     const char* displs_name, std::span<const std::size_t> displs, int size,
                     DataType dtype, std::size_t* extent);

}  // namespace chorus::api
