// Reduction arithmetic over typed buffers. No I/O, no threads.
#pragma once
#include <cstddef>

#include "chorus/types.h"

namespace chorus::kernels {

// Size in bytes of one element of `dtype`, 0 for an invalid value (same as
// chorus::dtype_size, kept here so kernels and algorithms need no other room).
std::size_t element_size(DataType dtype);

// dst[i] = a[i] op b[i] for i < count. dst may alias a or b (exactly, not partially).
// kAvg combines as kSum (finish with finalize()). Integer sum/prod wrap (computed
// unsigned, no UB); fp16/bf16 combine in fp32 and round to nearest even.
// REQUIRES: valid dtype and op.
void reduce(void* dst, const void* a, const void* b, std::size_t count, DataType dtype, ReduceOp op);

// Finishes a reduction over `nranks` contributions: for kAvg divides every element by
// nranks (integers: truncation toward zero); for other ops does nothing.
void finalize(void* buf, std::size_t count, DataType dtype, ReduceOp op, int nranks);

}  // namespace chorus::kernels
