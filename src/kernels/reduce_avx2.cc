// AVX2 + F16C reduction kernels, every dtype x op (int64 prod and min/max emulated). Only this
// file's kernels are compiled for AVX2; dispatch.cc calls them only after cpu_supports(kAvx2).
#if defined(__x86_64__)

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/kernel_table.h"

// Everything from here to pop_options (templates included) targets AVX2; the headers above
// and avx2_kernel() at the bottom stay baseline x86-64.
#pragma GCC push_options
#pragma GCC target("avx2,f16c,fma")

namespace chorus::kernels {
namespace {

using V = __m256i;

// Full vectors with Op::apply, the tail (n % lanes) with the scalar kernel.
template <DataType kDt, ReduceOp kOp, class Op, std::size_t kElem>
void run(void* dst, const void* a, const void* b, std::size_t n) {
  constexpr std::size_t kLanes = sizeof(V) / kElem;
  auto* d = static_cast<char*>(dst);
  const auto* x = static_cast<const char*>(a);
  const auto* y = static_cast<const char*>(b);
  std::size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const V r = Op::apply(_mm256_loadu_si256(reinterpret_cast<const V*>(x + i * kElem)),
                          _mm256_loadu_si256(reinterpret_cast<const V*>(y + i * kElem)));
    _mm256_storeu_si256(reinterpret_cast<V*>(d + i * kElem), r);
  }
  if (i < n) scalar_kernel(kDt, kOp)(d + i * kElem, x + i * kElem, y + i * kElem, n - i);
}

// --- integers (sum/prod wrap) ---
struct AddI8 { static V apply(V a, V b) { return _mm256_add_epi8(a, b); } };
struct AddI32 { static V apply(V a, V b) { return _mm256_add_epi32(a, b); } };
struct AddI64 { static V apply(V a, V b) { return _mm256_add_epi64(a, b); } };
// Low 8 bits of a product depend only on the low 8 bits of the factors: multiply even and
// odd bytes in 16-bit lanes and keep the low byte of each.
struct MulI8 {
  static V apply(V a, V b) {
    const V even = _mm256_mullo_epi16(a, b);
    const V odd = _mm256_mullo_epi16(_mm256_srli_epi16(a, 8), _mm256_srli_epi16(b, 8));
    return _mm256_or_si256(_mm256_and_si256(even, _mm256_set1_epi16(0xff)),
                           _mm256_slli_epi16(odd, 8));
  }
};
struct MulI32 { static V apply(V a, V b) { return _mm256_mullo_epi32(a, b); } };
// No 64-bit multiply before AVX-512DQ: lo*lo + ((lo*hi + hi*lo) << 32), all mod 2^64.
struct MulI64 {
  static V apply(V a, V b) {
    const V cross = _mm256_add_epi64(_mm256_mul_epu32(a, _mm256_srli_epi64(b, 32)),
                                     _mm256_mul_epu32(_mm256_srli_epi64(a, 32), b));
    return _mm256_add_epi64(_mm256_mul_epu32(a, b), _mm256_slli_epi64(cross, 32));
  }
};
struct MinS8 { static V apply(V a, V b) { return _mm256_min_epi8(a, b); } };
struct MaxS8 { static V apply(V a, V b) { return _mm256_max_epi8(a, b); } };
struct MinU8 { static V apply(V a, V b) { return _mm256_min_epu8(a, b); } };
struct MaxU8 { static V apply(V a, V b) { return _mm256_max_epu8(a, b); } };
struct MinS32 { static V apply(V a, V b) { return _mm256_min_epi32(a, b); } };
struct MaxS32 { static V apply(V a, V b) { return _mm256_max_epi32(a, b); } };
struct MinU32 { static V apply(V a, V b) { return _mm256_min_epu32(a, b); } };
struct MaxU32 { static V apply(V a, V b) { return _mm256_max_epu32(a, b); } };
// 64-bit min/max by compare + blend; unsigned compares flip the sign bit first.
template <bool kSigned>
V gt64(V a, V b) {
  if constexpr (!kSigned) {
    const V flip = _mm256_set1_epi64x(static_cast<long long>(0x8000000000000000ull));
    a = _mm256_xor_si256(a, flip);
    b = _mm256_xor_si256(b, flip);
  }
  return _mm256_cmpgt_epi64(a, b);
}
template <bool kSigned>
struct Min64 { static V apply(V a, V b) { return _mm256_blendv_epi8(a, b, gt64<kSigned>(a, b)); } };
template <bool kSigned>
struct Max64 { static V apply(V a, V b) { return _mm256_blendv_epi8(a, b, gt64<kSigned>(b, a)); } };

// --- float32 / float64: sum/prod canonicalise NaN; min(a,b) = minps(b,a) = b < a ? b : a ---
__m256 canon(__m256 r) {
  const __m256 nan = _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int>(kCanonicalNan32)));
  return _mm256_blendv_ps(r, nan, _mm256_cmp_ps(r, r, _CMP_UNORD_Q));
}
__m256d canon(__m256d r) {
  const __m256d nan =
      _mm256_castsi256_pd(_mm256_set1_epi64x(static_cast<long long>(kCanonicalNan64)));
  return _mm256_blendv_pd(r, nan, _mm256_cmp_pd(r, r, _CMP_UNORD_Q));
}
struct AddF32 { static __m256 f(__m256 a, __m256 b) { return canon(_mm256_add_ps(a, b)); } };
struct MulF32 { static __m256 f(__m256 a, __m256 b) { return canon(_mm256_mul_ps(a, b)); } };
struct MinF32 { static __m256 f(__m256 a, __m256 b) { return _mm256_min_ps(b, a); } };
struct MaxF32 { static __m256 f(__m256 a, __m256 b) { return _mm256_max_ps(b, a); } };
struct AddF64 { static __m256d f(__m256d a, __m256d b) { return canon(_mm256_add_pd(a, b)); } };
struct MulF64 { static __m256d f(__m256d a, __m256d b) { return canon(_mm256_mul_pd(a, b)); } };
struct MinF64 { static __m256d f(__m256d a, __m256d b) { return _mm256_min_pd(b, a); } };
struct MaxF64 { static __m256d f(__m256d a, __m256d b) { return _mm256_max_pd(b, a); } };

template <class F>
struct Ps {
  static V apply(V a, V b) {
    return _mm256_castps_si256(F::f(_mm256_castsi256_ps(a), _mm256_castsi256_ps(b)));
  }
};
template <class F>
struct Pd {
  static V apply(V a, V b) {
    return _mm256_castpd_si256(F::f(_mm256_castsi256_pd(a), _mm256_castsi256_pd(b)));
  }
};

// --- fp16 / bf16: 8 elements widened to fp32, combined with F, rounded back (nearest even) ---
struct Fp16 {
  static __m256 widen(__m128i h) { return _mm256_cvtph_ps(h); }
  static __m128i narrow(__m256 f) { return _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT); }
};
// Same bits as bf16_to_float / float_to_bf16 (half.cc), in integer arithmetic.
struct Bf16 {
  static __m256 widen(__m128i h) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
  static __m128i narrow(__m256 f) {
    const V x = _mm256_castps_si256(f);
    const V abs = _mm256_and_si256(x, _mm256_set1_epi32(0x7fffffff));
    const V nan = _mm256_cmpgt_epi32(abs, _mm256_set1_epi32(0x7f800000));
    const V hi = _mm256_srli_epi32(x, 16);
    const V lsb = _mm256_and_si256(hi, _mm256_set1_epi32(1));
    V r = _mm256_add_epi32(_mm256_add_epi32(x, _mm256_set1_epi32(0x7fff)), lsb);
    r = _mm256_srli_epi32(r, 16);
    r = _mm256_blendv_epi8(r, _mm256_or_si256(hi, _mm256_set1_epi32(0x40)), nan);
    // Every lane is <= 0xffff, so the saturating pack is exact.
    return _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
  }
};

template <DataType kDt, ReduceOp kOp, class F, class C>
void run16(void* dst, const void* a, const void* b, std::size_t n) {
  constexpr std::size_t kLanes = 8;
  auto* d = static_cast<std::uint16_t*>(dst);
  const auto* x = static_cast<const std::uint16_t*>(a);
  const auto* y = static_cast<const std::uint16_t*>(b);
  std::size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const __m256 fx = C::widen(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i)));
    const __m256 fy = C::widen(_mm_loadu_si128(reinterpret_cast<const __m128i*>(y + i)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), C::narrow(F::f(fx, fy)));
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

ReduceFn avx2_kernel(DataType dtype, ReduceOp op) {
  using enum DataType;
  switch (dtype) {
    case kInt8: return pick<kInt8, 1, AddI8, MulI8, MinS8, MaxS8>(op);
    case kUint8: return pick<kUint8, 1, AddI8, MulI8, MinU8, MaxU8>(op);
    case kInt32: return pick<kInt32, 4, AddI32, MulI32, MinS32, MaxS32>(op);
    case kUint32: return pick<kUint32, 4, AddI32, MulI32, MinU32, MaxU32>(op);
    case kInt64: return pick<kInt64, 8, AddI64, MulI64, Min64<true>, Max64<true>>(op);
    case kUint64: return pick<kUint64, 8, AddI64, MulI64, Min64<false>, Max64<false>>(op);
    case kFloat16: return pick16<kFloat16, Fp16>(op);
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
ReduceFn avx2_kernel(DataType, ReduceOp) { return nullptr; }
}  // namespace chorus::kernels

#endif
