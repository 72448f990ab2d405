// Reduction arithmetic over typed buffers. No I/O, no threads.
#pragma once
#include <cstddef>

#include "chorus/types.h"
#include "kernels/isa.h"

namespace chorus::kernels {

// Size in bytes of one element of `dtype`, 0 for an invalid value (same as
// chorus::dtype_size, kept here so kernels and algorithms need no other room).
std::size_t element_size(DataType dtype);

// dst[i] = a[i] op b[i] for i < count. dst may alias a or b (exactly, not partially).
// kAvg combines as kSum (finish with finalize()). Integer sum/prod wrap (computed
// unsigned, no UB); fp16/bf16 combine in fp32 and round to nearest even.
// Runs the vectorised kernel of active_isa() (see isa.h). Results are bit-identical at every
// level and on every x86-64 CPU (elementwise, no reassociation), given the default MXCSR:
//   - min/max: with a NaN operand or equal operands (-0.0 vs +0.0) the result is `a`
//     (min = b < a ? b : a, max = a < b ? b : a); fp16/bf16 NaNs come back quieted.
//   - float sum/prod: any NaN result is the canonical quiet NaN (+, payload 0; fp16 0x7e00,
//     bf16 0x7fc0, fp32 0x7fc00000, fp64 0x7ff8000000000000).
// REQUIRES: valid dtype and op. Thread-safe.
void reduce(void* dst, const void* a, const void* b, std::size_t count, DataType dtype, ReduceOp op);

// reduce() at level `isa` instead of active_isa() (pairs that level lacks run a lower level's
// code, see kernel_isa()). Returns false and touches nothing when this CPU lacks `isa`.
// For tests and benchmarks.
bool reduce_with(Isa isa, void* dst, const void* a, const void* b, std::size_t count,
                 DataType dtype, ReduceOp op);

// Finishes a reduction over `nranks` contributions: for kAvg divides every element by
// nranks (integers: truncation toward zero; floats: a NaN result is the canonical NaN);
// for other ops does nothing.
void finalize(void* buf, std::size_t count, DataType dtype, ReduceOp op, int nranks);

}  // namespace chorus::kernels
