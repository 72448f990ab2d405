// The vocabulary (struct Simd) of the SIMD level this translation unit is built for:
// CHORUS_ISA 1 = SSE4.2, 2 = AVX2, 3 = AVX-512. src/CMakeLists.txt compiles reduce_simd.cc
// and convert_simd.cc once per level with that define. Include it after every other header,
// between `#pragma GCC push_options` and `pop_options`: it sets the target of the code that
// follows, so headers (and their inline functions, which the linker may share with baseline
// callers) stay baseline x86-64. x86-64 only.
#if !defined(CHORUS_ISA)
#error "compile with -DCHORUS_ISA=1|2|3 (see src/CMakeLists.txt)"
#elif CHORUS_ISA == 1
#include "kernels/simd_sse.h"
#elif CHORUS_ISA == 2
#include "kernels/simd_avx2.h"
#elif CHORUS_ISA == 3
#include "kernels/simd_avx512.h"
#else
#error "unknown CHORUS_ISA"
#endif

namespace chorus::kernels {
namespace {

// float_to_bf16 (half.cc) on every 32-bit lane of x (fp32 bits), in integer arithmetic:
// round to nearest even, NaNs quieted; each result is <= 0xffff (S::pack16 narrows them).
template <class S>
typename S::V bf16_round(typename S::V x) {
  using V = typename S::V;
  const V abs = S::bit_and(x, S::set32(0x7fffffff));
  const typename S::M nan = S::gt_s32(abs, S::set32(0x7f800000));
  const V hi = S::template srl32<16>(x);
  const V lsb = S::bit_and(hi, S::set32(1));
  V r = S::add32(S::add32(x, S::set32(0x7fff)), lsb);
  r = S::template srl32<16>(r);
  return S::blend32(nan, r, S::bit_or(hi, S::set32(0x40)));
}

}  // namespace
}  // namespace chorus::kernels
