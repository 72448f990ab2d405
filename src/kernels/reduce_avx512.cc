// AVX-512 (F/BW/DQ/VL) reduction kernels, every dtype x op. Only this file's kernels are
// compiled for AVX-512; dispatch.cc calls them only after cpu_supports(Isa::kAvx512).
#if defined(__x86_64__)

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*() and warn (GCC PR105593).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/kernel_table.h"

// Everything from here to pop_options (templates included) targets AVX-512; the headers above
// and avx512_kernel() at the bottom stay baseline x86-64.
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl,avx2,f16c,fma")

namespace chorus::kernels {
namespace {

using V = __m512i;

// Full vectors with Op::apply, the tail (n % lanes) with the scalar kernel.
template <DataType kDt, ReduceOp kOp, class Op, std::size_t kElem>
void run(void* dst, const void* a, const void* b, std::size_t n) {
  constexpr std::size_t kLanes = sizeof(V) / kElem;
  auto* d = static_cast<char*>(dst);
  const auto* x = static_cast<const char*>(a);
  const auto* y = static_cast<const char*>(b);
  std::size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const V r = Op::apply(_mm512_loadu_si512(x + i * kElem), _mm512_loadu_si512(y + i * kElem));
    _mm512_storeu_si512(d + i * kElem, r);
  }
  if (i < n) scalar_kernel(kDt, kOp)(d + i * kElem, x + i * kElem, y + i * kElem, n - i);
}

// --- integers (sum/prod wrap) ---
struct AddI8 { static V apply(V a, V b) { return _mm512_add_epi8(a, b); } };
struct AddI32 { static V apply(V a, V b) { return _mm512_add_epi32(a, b); } };
struct AddI64 { static V apply(V a, V b) { return _mm512_add_epi64(a, b); } };
// Low 8 bits of a product depend only on the low 8 bits of the factors: multiply even and
// odd bytes in 16-bit lanes and keep the low byte of each.
struct MulI8 {
  static V apply(V a, V b) {
    const V even = _mm512_mullo_epi16(a, b);
    const V odd = _mm512_mullo_epi16(_mm512_srli_epi16(a, 8), _mm512_srli_epi16(b, 8));
    return _mm512_or_si512(_mm512_and_si512(even, _mm512_set1_epi16(0xff)),
                           _mm512_slli_epi16(odd, 8));
  }
};
struct MulI32 { static V apply(V a, V b) { return _mm512_mullo_epi32(a, b); } };
struct MulI64 { static V apply(V a, V b) { return _mm512_mullo_epi64(a, b); } };
struct MinS8 { static V apply(V a, V b) { return _mm512_min_epi8(a, b); } };
struct MaxS8 { static V apply(V a, V b) { return _mm512_max_epi8(a, b); } };
struct MinU8 { static V apply(V a, V b) { return _mm512_min_epu8(a, b); } };
struct MaxU8 { static V apply(V a, V b) { return _mm512_max_epu8(a, b); } };
struct MinS32 { static V apply(V a, V b) { return _mm512_min_epi32(a, b); } };
struct MaxS32 { static V apply(V a, V b) { return _mm512_max_epi32(a, b); } };
struct MinU32 { static V apply(V a, V b) { return _mm512_min_epu32(a, b); } };
struct MaxU32 { static V apply(V a, V b) { return _mm512_max_epu32(a, b); } };
struct MinS64 { static V apply(V a, V b) { return _mm512_min_epi64(a, b); } };
struct MaxS64 { static V apply(V a, V b) { return _mm512_max_epi64(a, b); } };
struct MinU64 { static V apply(V a, V b) { return _mm512_min_epu64(a, b); } };
struct MaxU64 { static V apply(V a, V b) { return _mm512_max_epu64(a, b); } };

// --- float32 / float64: sum/prod canonicalise NaN; min(a,b) = minps(b,a) = b < a ? b : a ---
__m512 canon(__m512 r) {
  const __m512 nan = _mm512_castsi512_ps(_mm512_set1_epi32(static_cast<int>(kCanonicalNan32)));
  return _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(r, r, _CMP_UNORD_Q), nan);
}
__m512d canon(__m512d r) {
  const __m512d nan =
      _mm512_castsi512_pd(_mm512_set1_epi64(static_cast<long long>(kCanonicalNan64)));
  return _mm512_mask_mov_pd(r, _mm512_cmp_pd_mask(r, r, _CMP_UNORD_Q), nan);
}
struct AddF32 { static __m512 f(__m512 a, __m512 b) { return canon(_mm512_add_ps(a, b)); } };
struct MulF32 { static __m512 f(__m512 a, __m512 b) { return canon(_mm512_mul_ps(a, b)); } };
struct MinF32 { static __m512 f(__m512 a, __m512 b) { return _mm512_min_ps(b, a); } };
struct MaxF32 { static __m512 f(__m512 a, __m512 b) { return _mm512_max_ps(b, a); } };
struct AddF64 { static __m512d f(__m512d a, __m512d b) { return canon(_mm512_add_pd(a, b)); } };
struct MulF64 { static __m512d f(__m512d a, __m512d b) { return canon(_mm512_mul_pd(a, b)); } };
struct MinF64 { static __m512d f(__m512d a, __m512d b) { return _mm512_min_pd(b, a); } };
struct MaxF64 { static __m512d f(__m512d a, __m512d b) { return _mm512_max_pd(b, a); } };

template <class F>
struct Ps {
  static V apply(V a, V b) {
    return _mm512_castps_si512(F::f(_mm512_castsi512_ps(a), _mm512_castsi512_ps(b)));
  }
};
template <class F>
struct Pd {
  static V apply(V a, V b) {
    return _mm512_castpd_si512(F::f(_mm512_castsi512_pd(a), _mm512_castsi512_pd(b)));
  }
};

// --- fp16 / bf16: 16 elements widened to fp32, combined with F, rounded back (nearest even) ---
struct Fp16 {
  static __m512 widen(__m256i h) { return _mm512_cvtph_ps(h); }
  static __m256i narrow(__m512 f) { return _mm512_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT); }
};
// Same bits as bf16_to_float / float_to_bf16 (half.cc), in integer arithmetic.
struct Bf16 {
  static __m512 widen(__m256i h) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
  static __m256i narrow(__m512 f) {
    const V x = _mm512_castps_si512(f);
    const V abs = _mm512_and_si512(x, _mm512_set1_epi32(0x7fffffff));
    const __mmask16 nan = _mm512_cmpgt_epi32_mask(abs, _mm512_set1_epi32(0x7f800000));
    const V hi = _mm512_srli_epi32(x, 16);
    const V lsb = _mm512_and_si512(hi, _mm512_set1_epi32(1));
    V r = _mm512_add_epi32(_mm512_add_epi32(x, _mm512_set1_epi32(0x7fff)), lsb);
    r = _mm512_srli_epi32(r, 16);
    r = _mm512_mask_mov_epi32(r, nan, _mm512_or_si512(hi, _mm512_set1_epi32(0x40)));
    return _mm512_cvtepi32_epi16(r);
  }
};

template <DataType kDt, ReduceOp kOp, class F, class C>
void run16(void* dst, const void* a, const void* b, std::size_t n) {
  constexpr std::size_t kLanes = 16;
  auto* d = static_cast<std::uint16_t*>(dst);
  const auto* x = static_cast<const std::uint16_t*>(a);
  const auto* y = static_cast<const std::uint16_t*>(b);
  std::size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const __m512 fx = C::widen(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i)));
    const __m512 fy = C::widen(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(y + i)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i), C::narrow(F::f(fx, fy)));
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

ReduceFn avx512_kernel(DataType dtype, ReduceOp op) {
  using enum DataType;
  switch (dtype) {
    case kInt8: return pick<kInt8, 1, AddI8, MulI8, MinS8, MaxS8>(op);
    case kUint8: return pick<kUint8, 1, AddI8, MulI8, MinU8, MaxU8>(op);
    case kInt32: return pick<kInt32, 4, AddI32, MulI32, MinS32, MaxS32>(op);
    case kUint32: return pick<kUint32, 4, AddI32, MulI32, MinU32, MaxU32>(op);
    case kInt64: return pick<kInt64, 8, AddI64, MulI64, MinS64, MaxS64>(op);
    case kUint64: return pick<kUint64, 8, AddI64, MulI64, MinU64, MaxU64>(op);
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
ReduceFn avx512_kernel(DataType, ReduceOp) { return nullptr; }
}  // namespace chorus::kernels

#endif
