// AVX-512 fp32 <-> fp16 (vcvtps2ph / vcvtph2ps, round to nearest even) and bf16 (integer
// arithmetic) conversions, 32 elements per step. convert.cc calls them only after
// cpu_supports(kAvx512). AVX512_BF16's vcvtneps2bf16 is not used: it flushes subnormal
// inputs to zero, so it would differ from the other levels.
#include "kernels/convert_table.h"

#if defined(__x86_64__)

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*() and warn (GCC PR105593).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl,avx2,f16c,fma")

namespace chorus::kernels {
namespace {

using V = __m512i;
using H = __m256i;

V load(const void* p) { return _mm512_loadu_si512(p); }
H load256(const void* p) { return _mm256_loadu_si256(static_cast<const H*>(p)); }
void store256(void* p, H v) { _mm256_storeu_si256(static_cast<H*>(p), v); }

void to_fp16(const float* src, std::uint16_t* dst, std::size_t n) {
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    store256(dst + i, _mm512_cvtps_ph(_mm512_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
    store256(dst + i + 16,
             _mm512_cvtps_ph(_mm512_loadu_ps(src + i + 16), _MM_FROUND_TO_NEAREST_INT));
  }
  if (i < n) scalar_converters().to_fp16(src + i, dst + i, n - i);
}

void from_fp16(const std::uint16_t* src, float* dst, std::size_t n) {
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(load256(src + i)));
    _mm512_storeu_ps(dst + i + 16, _mm512_cvtph_ps(load256(src + i + 16)));
  }
  if (i < n) scalar_converters().from_fp16(src + i, dst + i, n - i);
}

// float_to_bf16 on 16 lanes, narrowed to 16 bits (each result is <= 0xffff).
H bf16_round(V x) {
  const V abs = _mm512_and_si512(x, _mm512_set1_epi32(0x7fffffff));
  const __mmask16 nan = _mm512_cmpgt_epu32_mask(abs, _mm512_set1_epi32(0x7f800000));
  const V hi = _mm512_srli_epi32(x, 16);
  const V lsb = _mm512_and_si512(hi, _mm512_set1_epi32(1));
  V r = _mm512_add_epi32(_mm512_add_epi32(x, _mm512_set1_epi32(0x7fff)), lsb);
  r = _mm512_srli_epi32(r, 16);
  r = _mm512_mask_blend_epi32(nan, r, _mm512_or_si512(hi, _mm512_set1_epi32(0x40)));
  return _mm512_cvtepi32_epi16(r);
}

void to_bf16(const float* src, std::uint16_t* dst, std::size_t n) {
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    store256(dst + i, bf16_round(load(src + i)));
    store256(dst + i + 16, bf16_round(load(src + i + 16)));
  }
  if (i < n) scalar_converters().to_bf16(src + i, dst + i, n - i);
}

void from_bf16(const std::uint16_t* src, float* dst, std::size_t n) {
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    _mm512_storeu_si512(dst + i, _mm512_slli_epi32(_mm512_cvtepu16_epi32(load256(src + i)), 16));
    _mm512_storeu_si512(dst + i + 16,
                        _mm512_slli_epi32(_mm512_cvtepu16_epi32(load256(src + i + 16)), 16));
  }
  if (i < n) scalar_converters().from_bf16(src + i, dst + i, n - i);
}

}  // namespace
}  // namespace chorus::kernels

#pragma GCC pop_options

namespace chorus::kernels {
ConvertFns avx512_converters() { return {to_fp16, to_bf16, from_fp16, from_bf16}; }
}  // namespace chorus::kernels

#else
namespace chorus::kernels {
ConvertFns avx512_converters() { return {}; }
}  // namespace chorus::kernels
#endif
