// SSE4.2 reduction kernels, every dtype x op except fp16 (no F16C at this level: the scalar
// kernel runs it). Only this file's kernels are compiled for SSE4.2; dispatch.cc calls them
// only after cpu_supports(Isa::kSse).
#if defined(__x86_64__)

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/kernel_table.h"

// Everything from here to pop_options (templates included) targets SSE4.2; the headers above
// and sse_kernel() at the bottom stay baseline x86-64.
#pragma GCC push_options
#pragma GCC target("sse4.2")

namespace chorus::kernels {
namespace {

using V = __m128i;

// Full vectors with Op::apply, the tail (n % lanes) with the scalar kernel.
template <DataType kDt, ReduceOp kOp, class Op, std::size_t kElem>
void run(void* dst, const void* a, const void* b, std::size_t n) {
  constexpr std::size_t kLanes = sizeof(V) / kElem;
  auto* d = static_cast<char*>(dst);
  const auto* x = static_cast<const char*>(a);
  const auto* y = static_cast<const char*>(b);
  std::size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const V r = Op::apply(_mm_loadu_si128(reinterpret_cast<const V*>(x + i * kElem)),
                          _mm_loadu_si128(reinterpret_cast<const V*>(y + i * kElem)));
    _mm_storeu_si128(reinterpret_cast<V*>(d + i * kElem), r);
  }
  if (i < n) scalar_kernel(kDt, kOp)(d + i * kElem, x + i * kElem, y + i * kElem, n - i);
}

// --- integers (sum/prod wrap) ---
struct AddI8 { static V apply(V a, V b) { return _mm_add_epi8(a, b); } };
struct AddI32 { static V apply(V a, V b) { return _mm_add_epi32(a, b); } };
struct AddI64 { static V apply(V a, V b) { return _mm_add_epi64(a, b); } };
// Low 8 bits of a product depend only on the low 8 bits of the factors: multiply even and
// odd bytes in 16-bit lanes and keep the low byte of each.
struct MulI8 {
  static V apply(V a, V b) {
    const V even = _mm_mullo_epi16(a, b);
    const V odd = _mm_mullo_epi16(_mm_srli_epi16(a, 8), _mm_srli_epi16(b, 8));
    return _mm_or_si128(_mm_and_si128(even, _mm_set1_epi16(0xff)),
                           _mm_slli_epi16(odd, 8));
  }
};
struct MulI32 { static V apply(V a, V b) { return _mm_mullo_epi32(a, b); } };
// No 64-bit multiply in SSE: lo*lo + ((lo*hi + hi*lo) << 32), all mod 2^64.
struct MulI64 {
  static V apply(V a, V b) {
    const V cross = _mm_add_epi64(_mm_mul_epu32(a, _mm_srli_epi64(b, 32)),
                                     _mm_mul_epu32(_mm_srli_epi64(a, 32), b));
    return _mm_add_epi64(_mm_mul_epu32(a, b), _mm_slli_epi64(cross, 32));
  }
};
struct MinS8 { static V apply(V a, V b) { return _mm_min_epi8(a, b); } };
struct MaxS8 { static V apply(V a, V b) { return _mm_max_epi8(a, b); } };
struct MinU8 { static V apply(V a, V b) { return _mm_min_epu8(a, b); } };
struct MaxU8 { static V apply(V a, V b) { return _mm_max_epu8(a, b); } };
struct MinS32 { static V apply(V a, V b) { return _mm_min_epi32(a, b); } };
struct MaxS32 { static V apply(V a, V b) { return _mm_max_epi32(a, b); } };
struct MinU32 { static V apply(V a, V b) { return _mm_min_epu32(a, b); } };
struct MaxU32 { static V apply(V a, V b) { return _mm_max_epu32(a, b); } };
// 64-bit min/max by compare + blend; unsigned compares flip the sign bit first.
template <bool kSigned>
V gt64(V a, V b) {
  if constexpr (!kSigned) {
    const V flip = _mm_set1_epi64x(static_cast<long long>(0x8000000000000000ull));
    a = _mm_xor_si128(a, flip);
    b = _mm_xor_si128(b, flip);
  }
  return _mm_cmpgt_epi64(a, b);
}
template <bool kSigned>
struct Min64 { static V apply(V a, V b) { return _mm_blendv_epi8(a, b, gt64<kSigned>(a, b)); } };
template <bool kSigned>
struct Max64 { static V apply(V a, V b) { return _mm_blendv_epi8(a, b, gt64<kSigned>(b, a)); } };

// --- float32 / float64: sum/prod canonicalise NaN; min(a,b) = minps(b,a) = b < a ? b : a ---
__m128 canon(__m128 r) {
  const __m128 nan = _mm_castsi128_ps(_mm_set1_epi32(static_cast<int>(kCanonicalNan32)));
  return _mm_blendv_ps(r, nan, _mm_cmpunord_ps(r, r));
}
__m128d canon(__m128d r) {
  const __m128d nan =
      _mm_castsi128_pd(_mm_set1_epi64x(static_cast<long long>(kCanonicalNan64)));
  return _mm_blendv_pd(r, nan, _mm_cmpunord_pd(r, r));
}
struct AddF32 { static __m128 f(__m128 a, __m128 b) { return canon(_mm_add_ps(a, b)); } };
struct MulF32 { static __m128 f(__m128 a, __m128 b) { return canon(_mm_mul_ps(a, b)); } };
struct MinF32 { static __m128 f(__m128 a, __m128 b) { return _mm_min_ps(b, a); } };
struct MaxF32 { static __m128 f(__m128 a, __m128 b) { return _mm_max_ps(b, a); } };
struct AddF64 { static __m128d f(__m128d a, __m128d b) { return canon(_mm_add_pd(a, b)); } };
struct MulF64 { static __m128d f(__m128d a, __m128d b) { return canon(_mm_mul_pd(a, b)); } };
struct MinF64 { static __m128d f(__m128d a, __m128d b) { return _mm_min_pd(b, a); } };
struct MaxF64 { static __m128d f(__m128d a, __m128d b) { return _mm_max_pd(b, a); } };

template <class F>
struct Ps {
  static V apply(V a, V b) {
    return _mm_castps_si128(F::f(_mm_castsi128_ps(a), _mm_castsi128_ps(b)));
  }
};
template <class F>
struct Pd {
  static V apply(V a, V b) {
    return _mm_castpd_si128(F::f(_mm_castsi128_pd(a), _mm_castsi128_pd(b)));
  }
};

// --- bf16: 4 elements widened to fp32, combined with F, rounded back (nearest even) ---
// Same bits as bf16_to_float / float_to_bf16 (half.cc), in integer arithmetic.
struct Bf16 {
  static __m128 widen(__m128i h) {
    return _mm_castsi128_ps(_mm_unpacklo_epi16(_mm_setzero_si128(), h));  // h << 16
  }
  static __m128i narrow(__m128 f) {
    const V x = _mm_castps_si128(f);
    const V abs = _mm_and_si128(x, _mm_set1_epi32(0x7fffffff));
    const V nan = _mm_cmpgt_epi32(abs, _mm_set1_epi32(0x7f800000));
    const V hi = _mm_srli_epi32(x, 16);
    const V lsb = _mm_and_si128(hi, _mm_set1_epi32(1));
    V r = _mm_add_epi32(_mm_add_epi32(x, _mm_set1_epi32(0x7fff)), lsb);
    r = _mm_srli_epi32(r, 16);
    r = _mm_blendv_epi8(r, _mm_or_si128(hi, _mm_set1_epi32(0x40)), nan);
    return _mm_packus_epi32(r, r);  // every lane <= 0xffff, so the saturating pack is exact
  }
};

template <DataType kDt, ReduceOp kOp, class F, class C>
void run16(void* dst, const void* a, const void* b, std::size_t n) {
  constexpr std::size_t kLanes = 4;
  auto* d = static_cast<std::uint16_t*>(dst);
  const auto* x = static_cast<const std::uint16_t*>(a);
  const auto* y = static_cast<const std::uint16_t*>(b);
  std::size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const __m128 fx = C::widen(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(x + i)));
    const __m128 fy = C::widen(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(y + i)));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(d + i), C::narrow(F::f(fx, fy)));
  }
  if (i < n) scalar_kernel(kDt, kOp)(d + i, x + i, y + i, n - i);
}

template <DataType kDt, std::size_t kElem, class Add, class Mul, class Min, class Max>
ReduceFn pick(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAvg: return run<kDt, ReduceOp::kSum, Add, kElem>;
    case ReduceOp::kProd: return run<kDt, ReduceOp::kProd, Mul, kElem>;
    case ReduceOp::kMin: return run<kDt, ReduceOp::kMin, Min, kElem>;
    case ReduceOp::kMax: return run<kDt, ReduceOp::kMax, Max, kElem>;
  }
  return nullptr;
}

template <DataType kDt, class C>
ReduceFn pick16(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAvg: return run16<kDt, ReduceOp::kSum, AddF32, C>;
    case ReduceOp::kProd: return run16<kDt, ReduceOp::kProd, MulF32, C>;
    case ReduceOp::kMin: return run16<kDt, ReduceOp::kMin, MinF32, C>;
    case ReduceOp::kMax: return run16<kDt, ReduceOp::kMax, MaxF32, C>;
  }
  return nullptr;
}

}  // namespace
}  // namespace chorus::kernels

#pragma GCC pop_options

namespace chorus::kernels {

ReduceFn sse_kernel(DataType dtype, ReduceOp op) {
  using enum DataType;
  switch (dtype) {
    case kInt8: return pick<kInt8, 1, AddI8, MulI8, MinS8, MaxS8>(op);
    case kUint8: return pick<kUint8, 1, AddI8, MulI8, MinU8, MaxU8>(op);
    case kInt32: return pick<kInt32, 4, AddI32, MulI32, MinS32, MaxS32>(op);
    case kUint32: return pick<kUint32, 4, AddI32, MulI32, MinU32, MaxU32>(op);
    case kInt64: return pick<kInt64, 8, AddI64, MulI64, Min64<true>, Max64<true>>(op);
    case kUint64: return pick<kUint64, 8, AddI64, MulI64, Min64<false>, Max64<false>>(op);
    case kFloat16: return nullptr;
    case kBfloat16: return pick16<kBfloat16, Bf16>(op);
    case kFloat32: return pick<kFloat32, 4, Ps<AddF32>, Ps<MulF32>, Ps<MinF32>, Ps<MaxF32>>(op);
    case kFloat64: return pick<kFloat64, 8, Pd<AddF64>, Pd<MulF64>, Pd<MinF64>, Pd<MaxF64>>(op);
  }
  return nullptr;
}

}  // namespace chorus::kernels

#else  // not x86-64: no kernels at this level, the dispatcher uses scalar

#include "kernels/kernel_table.h"

namespace chorus::kernels {
ReduceFn sse_kernel(DataType, ReduceOp) { return nullptr; }
}  // namespace chorus::kernels

#endif
