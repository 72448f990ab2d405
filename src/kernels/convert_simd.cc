// The SIMD fp32 <-> fp16 / bf16 buffer conversions, written once over a level's vocabulary
// (struct Simd, kernels/simd.h) and compiled once per level by src/CMakeLists.txt:
// CHORUS_ISA=1 defines sse_converters (bf16 only: fp16 needs F16C), 2 avx2_converters,
// 3 avx512_converters. fp16 uses F16C (round to nearest even), bf16 integer arithmetic.
// AVX512_BF16's vcvtneps2bf16 is not used: it flushes subnormal inputs to zero, so it would
// differ from the other levels. Each step converts two vectors; the tail runs the scalar code.
#include "kernels/convert_table.h"

#if defined(__x86_64__)

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*() and warn (GCC PR105593).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

// Everything from here to pop_options (templates included) targets the level; the headers
// above and the level's entry point at the bottom stay baseline x86-64.
#pragma GCC push_options
#include "kernels/simd.h"

namespace chorus::kernels {
namespace {

// Elements per vector of 32-bit lanes, and per step of the loops below.
template <class S>
constexpr std::size_t kLanes = sizeof(typename S::F) / sizeof(float);

template <class S>
void to_fp16(const float* src, std::uint16_t* dst, std::size_t n) {
  constexpr std::size_t kL = kLanes<S>;
  std::size_t i = 0;
  for (; i + 2 * kL <= n; i += 2 * kL) {
    S::store2_h(dst + i, S::fp16_narrow(S::load_f(src + i)),
                S::fp16_narrow(S::load_f(src + i + kL)));
  }
  if (i < n) scalar_converters().to_fp16(src + i, dst + i, n - i);
}

template <class S>
void from_fp16(const std::uint16_t* src, float* dst, std::size_t n) {
  constexpr std::size_t kL = kLanes<S>;
  std::size_t i = 0;
  for (; i + 2 * kL <= n; i += 2 * kL) {
    S::store_f(dst + i, S::fp16_widen(S::load_h(src + i)));
    S::store_f(dst + i + kL, S::fp16_widen(S::load_h(src + i + kL)));
  }
  if (i < n) scalar_converters().from_fp16(src + i, dst + i, n - i);
}

template <class S>
void to_bf16(const float* src, std::uint16_t* dst, std::size_t n) {
  constexpr std::size_t kL = kLanes<S>;
  std::size_t i = 0;
  for (; i + 2 * kL <= n; i += 2 * kL) {
    S::store2_pack16(dst + i, bf16_round<S>(S::load(src + i)),
                     bf16_round<S>(S::load(src + i + kL)));
  }
  if (i < n) scalar_converters().to_bf16(src + i, dst + i, n - i);
}

template <class S>
void from_bf16(const std::uint16_t* src, float* dst, std::size_t n) {
  constexpr std::size_t kL = kLanes<S>;
  std::size_t i = 0;
  for (; i + 2 * kL <= n; i += 2 * kL) {
    typename S::V lo, hi;
    S::bf16_widen2(src + i, lo, hi);
    S::store(dst + i, lo);
    S::store(dst + i + kL, hi);
  }
  if (i < n) scalar_converters().from_bf16(src + i, dst + i, n - i);
}

}  // namespace
}  // namespace chorus::kernels

#pragma GCC pop_options

namespace chorus::kernels {
namespace {
template <class S>
ConvertFns level_fns() {
  if constexpr (S::kFp16) return {to_fp16<S>, to_bf16<S>, from_fp16<S>, from_bf16<S>};
  return {nullptr, to_bf16<S>, nullptr, from_bf16<S>};
}
ConvertFns this_level() { return level_fns<Simd>(); }
}  // namespace
}  // namespace chorus::kernels

#else  // not x86-64: no code at this level, the dispatcher uses scalar

namespace chorus::kernels {
namespace {
ConvertFns this_level() { return {}; }
}  // namespace
}  // namespace chorus::kernels

#endif

namespace chorus::kernels {
#if CHORUS_ISA == 1
ConvertFns sse_converters() { return this_level(); }
#elif CHORUS_ISA == 2
ConvertFns avx2_converters() { return this_level(); }
#elif CHORUS_ISA == 3
ConvertFns avx512_converters() { return this_level(); }
#endif
}  // namespace chorus::kernels
