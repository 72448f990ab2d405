// The AVX2 + F16C vocabulary of the SIMD kernels: what reduce_simd.cc and convert_simd.cc
// need at this width. Included only by them when compiled for level 2 (CHORUS_ISA=2),
// between their push_options and pop_options, so only their kernels target AVX2; dispatch
// calls those only after cpu_supports(Isa::kAvx2).
#pragma GCC target("avx2,f16c,fma")

namespace chorus::kernels {
namespace {

struct Simd {
  static constexpr bool kNative64 = false;  // 64-bit multiply, min and max emulated
  static constexpr bool kFp16 = true;       // F16C conversions

  using V = __m256i;  // integer lanes
  using F = __m256;   // float32 lanes
  using D = __m256d;  // float64 lanes
  using H = __m128i;  // one F's worth of 16-bit values
  using M = __m256i;  // result of a 32-bit lane compare

  static V load(const void* p) { return _mm256_loadu_si256(static_cast<const V*>(p)); }
  static void store(void* p, V v) { _mm256_storeu_si256(static_cast<V*>(p), v); }
  static H load_h(const void* p) { return _mm_loadu_si128(static_cast<const H*>(p)); }
  static void store_h(void* p, H v) { _mm_storeu_si128(static_cast<H*>(p), v); }
  static F load_f(const float* p) { return _mm256_loadu_ps(p); }
  static void store_f(float* p, F v) { _mm256_storeu_ps(p, v); }
  static F ps(V v) { return _mm256_castsi256_ps(v); }
  static D pd(V v) { return _mm256_castsi256_pd(v); }
  static V si(F v) { return _mm256_castps_si256(v); }
  static V si(D v) { return _mm256_castpd_si256(v); }

  static V bit_and(V a, V b) { return _mm256_and_si256(a, b); }
  static V bit_or(V a, V b) { return _mm256_or_si256(a, b); }
  static V bit_xor(V a, V b) { return _mm256_xor_si256(a, b); }
  static V set16(short x) { return _mm256_set1_epi16(x); }
  static V set32(int x) { return _mm256_set1_epi32(x); }
  static V set64(long long x) { return _mm256_set1_epi64x(x); }
  template <int kN> static V srl16(V a) { return _mm256_srli_epi16(a, kN); }
  template <int kN> static V sll16(V a) { return _mm256_slli_epi16(a, kN); }
  template <int kN> static V srl32(V a) { return _mm256_srli_epi32(a, kN); }
  template <int kN> static V srl64(V a) { return _mm256_srli_epi64(a, kN); }
  template <int kN> static V sll64(V a) { return _mm256_slli_epi64(a, kN); }

  static V add8(V a, V b) { return _mm256_add_epi8(a, b); }
  static V add32(V a, V b) { return _mm256_add_epi32(a, b); }
  static V add64(V a, V b) { return _mm256_add_epi64(a, b); }
  static V mul16(V a, V b) { return _mm256_mullo_epi16(a, b); }
  static V mul32(V a, V b) { return _mm256_mullo_epi32(a, b); }
  static V mul_lo32(V a, V b) { return _mm256_mul_epu32(a, b); }  // 32x32 -> 64 per 64-bit lane
  static V min_s8(V a, V b) { return _mm256_min_epi8(a, b); }
  static V max_s8(V a, V b) { return _mm256_max_epi8(a, b); }
  static V min_u8(V a, V b) { return _mm256_min_epu8(a, b); }
  static V max_u8(V a, V b) { return _mm256_max_epu8(a, b); }
  static V min_s32(V a, V b) { return _mm256_min_epi32(a, b); }
  static V max_s32(V a, V b) { return _mm256_max_epi32(a, b); }
  static V min_u32(V a, V b) { return _mm256_min_epu32(a, b); }
  static V max_u32(V a, V b) { return _mm256_max_epu32(a, b); }
  static V gt_s64(V a, V b) { return _mm256_cmpgt_epi64(a, b); }
  // a, with b in the bytes whose mask byte has its top bit set.
  static V blend8(V a, V b, V mask) { return _mm256_blendv_epi8(a, b, mask); }

  static F add(F a, F b) { return _mm256_add_ps(a, b); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F min(F a, F b) { return _mm256_min_ps(a, b); }
  static F max(F a, F b) { return _mm256_max_ps(a, b); }
  static D add(D a, D b) { return _mm256_add_pd(a, b); }
  static D mul(D a, D b) { return _mm256_mul_pd(a, b); }
  static D min(D a, D b) { return _mm256_min_pd(a, b); }
  static D max(D a, D b) { return _mm256_max_pd(a, b); }
  // r, with `nan` in the lanes where r is NaN.
  static F where_nan(F r, F nan) {
    return _mm256_blendv_ps(r, nan, _mm256_cmp_ps(r, r, _CMP_UNORD_Q));
  }
  static D where_nan(D r, D nan) {
    return _mm256_blendv_pd(r, nan, _mm256_cmp_pd(r, r, _CMP_UNORD_Q));
  }

  static F fp16_widen(H h) { return _mm256_cvtph_ps(h); }
  static H fp16_narrow(F f) { return _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT); }
  // bf16 bits -> fp32 bits (each value << 16).
  static V bf16_widen(H h) { return _mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16); }
  static M gt_s32(V a, V b) { return _mm256_cmpgt_epi32(a, b); }
  // a, with b in the lanes of m.
  static V blend32(M m, V a, V b) { return _mm256_blendv_epi8(a, b, m); }
  // The low 16 bits of each 32-bit lane (every lane <= 0xffff, so the saturating pack is exact).
  static H pack16(V v) {
    return _mm_packus_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  }

  // Two steps of the conversions at once (the pair packs in fewer instructions): the 16-bit
  // blocks a, b stored at p; the low 16 bits of the lanes of a then b stored at p; the 2 * 8
  // bf16 values at p widened to fp32 bits.
  static void store2_h(void* p, H a, H b) { store(p, _mm256_set_m128i(b, a)); }
  static void store2_pack16(void* p, V a, V b) {
    // packus works per 128-bit half: a0 b0 a1 b1 (in 64-bit blocks); 0xd8 restores a0 a1 b0 b1.
    store(p, _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xd8));
  }
  static void bf16_widen2(const void* p, V& lo, V& hi) {
    lo = bf16_widen(load_h(p));
    hi = bf16_widen(load_h(static_cast<const char*>(p) + 16));
  }
};

}  // namespace
}  // namespace chorus::kernels
