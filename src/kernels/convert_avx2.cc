// AVX2 + F16C fp32 <-> fp16 (F16C, round to nearest even) and bf16 (integer arithmetic)
// conversions, 16 elements per step. convert.cc calls them only after cpu_supports(kAvx2).
#include "kernels/convert_table.h"

#if defined(__x86_64__)

#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx2,f16c,fma")

namespace chorus::kernels {
namespace {

using V = __m256i;

V load(const void* p) { return _mm256_loadu_si256(static_cast<const V*>(p)); }
__m128i load128(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }

void to_fp16(const float* src, std::uint16_t* dst, std::size_t n) {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i a = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
    const __m128i b = _mm256_cvtps_ph(_mm256_loadu_ps(src + i + 8), _MM_FROUND_TO_NEAREST_INT);
    _mm256_storeu_si256(reinterpret_cast<V*>(dst + i), _mm256_set_m128i(b, a));
  }
  if (i < n) scalar_converters().to_fp16(src + i, dst + i, n - i);
}

void from_fp16(const std::uint16_t* src, float* dst, std::size_t n) {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(load128(src + i)));
    _mm256_storeu_ps(dst + i + 8, _mm256_cvtph_ps(load128(src + i + 8)));
  }
  if (i < n) scalar_converters().from_fp16(src + i, dst + i, n - i);
}

// float_to_bf16 on 8 lanes (as 32-bit results, each <= 0xffff).
V bf16_round(V x) {
  const V abs = _mm256_and_si256(x, _mm256_set1_epi32(0x7fffffff));
  const V nan = _mm256_cmpgt_epi32(abs, _mm256_set1_epi32(0x7f800000));
  const V hi = _mm256_srli_epi32(x, 16);
  const V lsb = _mm256_and_si256(hi, _mm256_set1_epi32(1));
  V r = _mm256_add_epi32(_mm256_add_epi32(x, _mm256_set1_epi32(0x7fff)), lsb);
  r = _mm256_srli_epi32(r, 16);
  return _mm256_blendv_epi8(r, _mm256_or_si256(hi, _mm256_set1_epi32(0x40)), nan);
}

void to_bf16(const float* src, std::uint16_t* dst, std::size_t n) {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    // packus works per 128-bit half: a0 b0 a1 b1 (in 64-bit blocks); 0xd8 restores a0 a1 b0 b1.
    const V packed = _mm256_packus_epi32(bf16_round(load(src + i)), bf16_round(load(src + i + 8)));
    _mm256_storeu_si256(reinterpret_cast<V*>(dst + i), _mm256_permute4x64_epi64(packed, 0xd8));
  }
  if (i < n) scalar_converters().to_bf16(src + i, dst + i, n - i);
}

void from_bf16(const std::uint16_t* src, float* dst, std::size_t n) {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const V a = _mm256_slli_epi32(_mm256_cvtepu16_epi32(load128(src + i)), 16);
    const V b = _mm256_slli_epi32(_mm256_cvtepu16_epi32(load128(src + i + 8)), 16);
    _mm256_storeu_si256(reinterpret_cast<V*>(dst + i), a);
    _mm256_storeu_si256(reinterpret_cast<V*>(dst + i + 8), b);
  }
  if (i < n) scalar_converters().from_bf16(src + i, dst + i, n - i);
}

}  // namespace
}  // namespace chorus::kernels

#pragma GCC pop_options

namespace chorus::kernels {
ConvertFns avx2_converters() { return {to_fp16, to_bf16, from_fp16, from_bf16}; }
}  // namespace chorus::kernels

#else
namespace chorus::kernels {
ConvertFns avx2_converters() { return {}; }
}  // namespace chorus::kernels
#endif
