// The SSE4.2 vocabulary of the SIMD kernels: what reduce_simd.cc and convert_simd.cc need
// at this width (no F16C: fp16 runs the scalar code at this level). Included only by them
// when compiled for level 1 (CHORUS_ISA=1), between their push_options and pop_options, so
// only their kernels target SSE4.2; dispatch calls those only after cpu_supports(Isa::kSse).
#pragma GCC target("sse4.2")

namespace chorus::kernels {
namespace {

struct Simd {
  static constexpr bool kNative64 = false;  // 64-bit multiply, min and max emulated
  static constexpr bool kFp16 = false;      // no F16C

  using V = __m128i;  // integer lanes
  using F = __m128;   // float32 lanes
  using D = __m128d;  // float64 lanes
  using H = __m128i;  // one F's worth of 16-bit values, in the low 64 bits
  using M = __m128i;  // result of a 32-bit lane compare

  static V load(const void* p) { return _mm_loadu_si128(static_cast<const V*>(p)); }
  static void store(void* p, V v) { _mm_storeu_si128(static_cast<V*>(p), v); }
  static H load_h(const void* p) { return _mm_loadl_epi64(static_cast<const H*>(p)); }
  static void store_h(void* p, H v) { _mm_storel_epi64(static_cast<H*>(p), v); }
  static F load_f(const float* p) { return _mm_loadu_ps(p); }
  static void store_f(float* p, F v) { _mm_storeu_ps(p, v); }
  static F ps(V v) { return _mm_castsi128_ps(v); }
  static D pd(V v) { return _mm_castsi128_pd(v); }
  static V si(F v) { return _mm_castps_si128(v); }
  static V si(D v) { return _mm_castpd_si128(v); }

  static V bit_and(V a, V b) { return _mm_and_si128(a, b); }
  static V bit_or(V a, V b) { return _mm_or_si128(a, b); }
  static V bit_xor(V a, V b) { return _mm_xor_si128(a, b); }
  static V set16(short x) { return _mm_set1_epi16(x); }
  static V set32(int x) { return _mm_set1_epi32(x); }
  static V set64(long long x) { return _mm_set1_epi64x(x); }
  template <int kN> static V srl16(V a) { return _mm_srli_epi16(a, kN); }
  template <int kN> static V sll16(V a) { return _mm_slli_epi16(a, kN); }
  template <int kN> static V srl32(V a) { return _mm_srli_epi32(a, kN); }
  template <int kN> static V srl64(V a) { return _mm_srli_epi64(a, kN); }
  template <int kN> static V sll64(V a) { return _mm_slli_epi64(a, kN); }

  static V add8(V a, V b) { return _mm_add_epi8(a, b); }
  static V add32(V a, V b) { return _mm_add_epi32(a, b); }
  static V add64(V a, V b) { return _mm_add_epi64(a, b); }
  static V mul16(V a, V b) { return _mm_mullo_epi16(a, b); }
  static V mul32(V a, V b) { return _mm_mullo_epi32(a, b); }
  static V mul_lo32(V a, V b) { return _mm_mul_epu32(a, b); }  // 32x32 -> 64 per 64-bit lane
  static V min_s8(V a, V b) { return _mm_min_epi8(a, b); }
  static V max_s8(V a, V b) { return _mm_max_epi8(a, b); }
  static V min_u8(V a, V b) { return _mm_min_epu8(a, b); }
  static V max_u8(V a, V b) { return _mm_max_epu8(a, b); }
  static V min_s32(V a, V b) { return _mm_min_epi32(a, b); }
  static V max_s32(V a, V b) { return _mm_max_epi32(a, b); }
  static V min_u32(V a, V b) { return _mm_min_epu32(a, b); }
  static V max_u32(V a, V b) { return _mm_max_epu32(a, b); }
  static V gt_s64(V a, V b) { return _mm_cmpgt_epi64(a, b); }
  // a, with b in the bytes whose mask byte has its top bit set.
  static V blend8(V a, V b, V mask) { return _mm_blendv_epi8(a, b, mask); }

  static F add(F a, F b) { return _mm_add_ps(a, b); }
  static F mul(F a, F b) { return _mm_mul_ps(a, b); }
  static F min(F a, F b) { return _mm_min_ps(a, b); }
  static F max(F a, F b) { return _mm_max_ps(a, b); }
  static D add(D a, D b) { return _mm_add_pd(a, b); }
  static D mul(D a, D b) { return _mm_mul_pd(a, b); }
  static D min(D a, D b) { return _mm_min_pd(a, b); }
  static D max(D a, D b) { return _mm_max_pd(a, b); }
  // r, with `nan` in the lanes where r is NaN.
  static F where_nan(F r, F nan) { return _mm_blendv_ps(r, nan, _mm_cmpunord_ps(r, r)); }
  static D where_nan(D r, D nan) { return _mm_blendv_pd(r, nan, _mm_cmpunord_pd(r, r)); }

  // bf16 bits -> fp32 bits: interleaving zero below each value gives value << 16.
  static V bf16_widen(H h) { return _mm_unpacklo_epi16(_mm_setzero_si128(), h); }
  static M gt_s32(V a, V b) { return _mm_cmpgt_epi32(a, b); }
  // a, with b in the lanes of m.
  static V blend32(M m, V a, V b) { return _mm_blendv_epi8(a, b, m); }
  // The low 16 bits of each 32-bit lane, in the low 64 bits (every lane <= 0xffff, so the
  // saturating pack is exact).
  static H pack16(V v) { return _mm_packus_epi32(v, v); }

  // Two steps of the conversions at once (the pair packs and widens in fewer instructions):
  // the 16-bit blocks a, b stored at p; the low 16 bits of the lanes of a then b stored at p;
  // the 2 * 4 bf16 values at p widened to fp32 bits.
  static void store2_h(void* p, H a, H b) {
    store_h(p, a);
    store_h(static_cast<char*>(p) + 8, b);
  }
  static void store2_pack16(void* p, V a, V b) { store(p, _mm_packus_epi32(a, b)); }
  static void bf16_widen2(const void* p, V& lo, V& hi) {
    const V h = load(p);
    lo = _mm_unpacklo_epi16(_mm_setzero_si128(), h);
    hi = _mm_unpackhi_epi16(_mm_setzero_si128(), h);
  }
};

}  // namespace
}  // namespace chorus::kernels
