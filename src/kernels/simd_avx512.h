// The AVX-512 (F/BW/DQ/VL) vocabulary of the SIMD kernels: what reduce_simd.cc and
// convert_simd.cc need at this width. Included only by them when compiled for level 3
// (CHORUS_ISA=3), between their push_options and pop_options, so only their kernels target
// AVX-512; dispatch calls those only after cpu_supports(Isa::kAvx512).
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl,avx2,f16c,fma")

namespace chorus::kernels {
namespace {

struct Simd {
  static constexpr bool kNative64 = true;  // 64-bit multiply, min and max in hardware
  static constexpr bool kFp16 = true;      // F16C conversions

  using V = __m512i;   // integer lanes
  using F = __m512;    // float32 lanes
  using D = __m512d;   // float64 lanes
  using H = __m256i;   // one F's worth of 16-bit values
  using M = __mmask16; // result of a 32-bit lane compare

  static V load(const void* p) { return _mm512_loadu_si512(p); }
  static void store(void* p, V v) { _mm512_storeu_si512(p, v); }
  static H load_h(const void* p) { return _mm256_loadu_si256(static_cast<const H*>(p)); }
  static void store_h(void* p, H v) { _mm256_storeu_si256(static_cast<H*>(p), v); }
  static F load_f(const float* p) { return _mm512_loadu_ps(p); }
  static void store_f(float* p, F v) { _mm512_storeu_ps(p, v); }
  static F ps(V v) { return _mm512_castsi512_ps(v); }
  static D pd(V v) { return _mm512_castsi512_pd(v); }
  static V si(F v) { return _mm512_castps_si512(v); }
  static V si(D v) { return _mm512_castpd_si512(v); }

  static V bit_and(V a, V b) { return _mm512_and_si512(a, b); }
  static V bit_or(V a, V b) { return _mm512_or_si512(a, b); }
  static V set16(short x) { return _mm512_set1_epi16(x); }
  static V set32(int x) { return _mm512_set1_epi32(x); }
  static V set64(long long x) { return _mm512_set1_epi64(x); }
  template <int kN> static V srl16(V a) { return _mm512_srli_epi16(a, kN); }
  template <int kN> static V sll16(V a) { return _mm512_slli_epi16(a, kN); }
  template <int kN> static V srl32(V a) { return _mm512_srli_epi32(a, kN); }

  static V add8(V a, V b) { return _mm512_add_epi8(a, b); }
  static V add32(V a, V b) { return _mm512_add_epi32(a, b); }
  static V add64(V a, V b) { return _mm512_add_epi64(a, b); }
  static V mul16(V a, V b) { return _mm512_mullo_epi16(a, b); }
  static V mul32(V a, V b) { return _mm512_mullo_epi32(a, b); }
  static V mul64(V a, V b) { return _mm512_mullo_epi64(a, b); }
  static V min_s8(V a, V b) { return _mm512_min_epi8(a, b); }
  static V max_s8(V a, V b) { return _mm512_max_epi8(a, b); }
  static V min_u8(V a, V b) { return _mm512_min_epu8(a, b); }
  static V max_u8(V a, V b) { return _mm512_max_epu8(a, b); }
  static V min_s32(V a, V b) { return _mm512_min_epi32(a, b); }
  static V max_s32(V a, V b) { return _mm512_max_epi32(a, b); }
  static V min_u32(V a, V b) { return _mm512_min_epu32(a, b); }
  static V max_u32(V a, V b) { return _mm512_max_epu32(a, b); }
  static V min_s64(V a, V b) { return _mm512_min_epi64(a, b); }
  static V max_s64(V a, V b) { return _mm512_max_epi64(a, b); }
  static V min_u64(V a, V b) { return _mm512_min_epu64(a, b); }
  static V max_u64(V a, V b) { return _mm512_max_epu64(a, b); }

  static F add(F a, F b) { return _mm512_add_ps(a, b); }
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F min(F a, F b) { return _mm512_min_ps(a, b); }
  static F max(F a, F b) { return _mm512_max_ps(a, b); }
  static D add(D a, D b) { return _mm512_add_pd(a, b); }
  static D mul(D a, D b) { return _mm512_mul_pd(a, b); }
  static D min(D a, D b) { return _mm512_min_pd(a, b); }
  static D max(D a, D b) { return _mm512_max_pd(a, b); }
  // r, with `nan` in the lanes where r is NaN.
  static F where_nan(F r, F nan) {
    return _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(r, r, _CMP_UNORD_Q), nan);
  }
  static D where_nan(D r, D nan) {
    return _mm512_mask_mov_pd(r, _mm512_cmp_pd_mask(r, r, _CMP_UNORD_Q), nan);
  }

  static F fp16_widen(H h) { return _mm512_cvtph_ps(h); }
  static H fp16_narrow(F f) { return _mm512_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT); }
  // bf16 bits -> fp32 bits (each value << 16).
  static V bf16_widen(H h) { return _mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16); }
  static M gt_s32(V a, V b) { return _mm512_cmpgt_epi32_mask(a, b); }
  // a, with b in the lanes of m.
  static V blend32(M m, V a, V b) { return _mm512_mask_mov_epi32(a, m, b); }
  // The low 16 bits of each 32-bit lane (every lane <= 0xffff).
  static H pack16(V v) { return _mm512_cvtepi32_epi16(v); }

  // Two steps of the conversions at once: the 16-bit blocks a, b stored at p; the low 16 bits
  // of the lanes of a then b stored at p; the 2 * 16 bf16 values at p widened to fp32 bits.
  static void store2_h(void* p, H a, H b) {
    store_h(p, a);
    store_h(static_cast<char*>(p) + 32, b);
  }
  static void store2_pack16(void* p, V a, V b) { store2_h(p, pack16(a), pack16(b)); }
  static void bf16_widen2(const void* p, V& lo, V& hi) {
    lo = bf16_widen(load_h(p));
    hi = bf16_widen(load_h(static_cast<const char*>(p) + 32));
  }
};

}  // namespace
}  // namespace chorus::kernels
