// SSE4.1 bf16 <-> fp32 conversions in integer arithmetic (fp16 needs F16C: the scalar code
// runs at this level). dispatch in convert.cc calls them only after cpu_supports(kSse).
#include "kernels/convert_table.h"

#if defined(__x86_64__)

#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("sse4.2")

namespace chorus::kernels {
namespace {

// float_to_bf16 on 4 lanes (as 32-bit results, each <= 0xffff).
__m128i bf16_round(__m128i x) {
  const __m128i abs = _mm_and_si128(x, _mm_set1_epi32(0x7fffffff));
  const __m128i nan = _mm_cmpgt_epi32(abs, _mm_set1_epi32(0x7f800000));
  const __m128i hi = _mm_srli_epi32(x, 16);
  const __m128i lsb = _mm_and_si128(hi, _mm_set1_epi32(1));
  __m128i r = _mm_add_epi32(_mm_add_epi32(x, _mm_set1_epi32(0x7fff)), lsb);
  r = _mm_srli_epi32(r, 16);
  return _mm_blendv_epi8(r, _mm_or_si128(hi, _mm_set1_epi32(0x40)), nan);
}

void to_bf16(const float* src, std::uint16_t* dst, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i a = bf16_round(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
    const __m128i b = bf16_round(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 4)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), _mm_packus_epi32(a, b));
  }
  if (i < n) scalar_converters().to_bf16(src + i, dst + i, n - i);
}

void from_bf16(const std::uint16_t* src, float* dst, std::size_t n) {
  const __m128i zero = _mm_setzero_si128();
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    // Interleaving zero below each value gives value << 16 per 32-bit lane.
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), _mm_unpacklo_epi16(zero, h));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i + 4), _mm_unpackhi_epi16(zero, h));
  }
  if (i < n) scalar_converters().from_bf16(src + i, dst + i, n - i);
}

}  // namespace
}  // namespace chorus::kernels

#pragma GCC pop_options

namespace chorus::kernels {
ConvertFns sse_converters() { return {nullptr, to_bf16, nullptr, from_bf16}; }
}  // namespace chorus::kernels

#else
namespace chorus::kernels {
ConvertFns sse_converters() { return {}; }
}  // namespace chorus::kernels
#endif
