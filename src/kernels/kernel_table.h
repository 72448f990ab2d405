// Internal to src/kernels: the per-level kernel tables that dispatch.cc chooses between.
#pragma once
#include <cstddef>
#include <cstdint>

#include "chorus/types.h"

namespace chorus::kernels {

// Float sum/prod (and so avg) return this quiet NaN whenever the result is NaN, at every
// level: hardware NaN propagation depends on operand order, which compilers may swap.
inline constexpr std::uint32_t kCanonicalNan32 = 0x7fc00000u;
inline constexpr std::uint64_t kCanonicalNan64 = 0x7ff8000000000000ull;

// dst[i] = a[i] op b[i] for i < n; dst may alias a or b exactly. Every level's kernel for
// (dtype, op) gives the same bits as the scalar one.
using ReduceFn = void (*)(void* dst, const void* a, const void* b, std::size_t n);

// Kernel of one level for (dtype, op), or nullptr when that level has none for the pair (the
// dispatcher then uses a lower level). `op` is never kAvg (callers pass kSum). The scalar
// level has every pair. Calling a non-null kernel REQUIRES cpu_supports(level).
ReduceFn scalar_kernel(DataType dtype, ReduceOp op);
ReduceFn sse_kernel(DataType dtype, ReduceOp op);
ReduceFn avx2_kernel(DataType dtype, ReduceOp op);
ReduceFn avx512_kernel(DataType dtype, ReduceOp op);

}  // namespace chorus::kernels
