// The SIMD reduction kernels, every dtype x op, written once over a level's vocabulary
// (struct Simd, kernels/simd.h) and compiled once per level by src/CMakeLists.txt:
// CHORUS_ISA=1 defines sse_kernel (fp16 runs the scalar code: no F16C), 2 avx2_kernel,
// 3 avx512_kernel. Full vectors run here, the tail (n % lanes) runs the scalar kernel, so
// every level gives the scalar level's bits (kernel_table.h).
#include "kernels/kernel_table.h"

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

// Full vectors with Op::apply, the tail with the scalar kernel.
template <class S, DataType kDt, ReduceOp kOp, class Op, std::size_t kElem>
void run(void* dst, const void* a, const void* b, std::size_t n) {
  constexpr std::size_t kLanes = sizeof(typename S::V) / kElem;
  auto* d = static_cast<char*>(dst);
  const auto* x = static_cast<const char*>(a);
  const auto* y = static_cast<const char*>(b);
  std::size_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    S::store(d + i * kElem, Op::apply(S::load(x + i * kElem), S::load(y + i * kElem)));
  if (i < n) scalar_kernel(kDt, kOp)(d + i * kElem, x + i * kElem, y + i * kElem, n - i);
}

// --- integers (sum/prod wrap) ---
// One instruction of the level. (The vector types' attributes, e.g. may_alias, do not take
// part in a function pointer template argument; GCC says so for every use.)
#pragma GCC diagnostic ignored "-Wignored-attributes"
template <class S, typename S::V (*kFn)(typename S::V, typename S::V)>
struct Lane {
  static typename S::V apply(typename S::V a, typename S::V b) { return kFn(a, b); }
};
// Low 8 bits of a product depend only on the low 8 bits of the factors: multiply even and
// odd bytes in 16-bit lanes and keep the low byte of each.
template <class S>
struct MulI8 {
  static typename S::V apply(typename S::V a, typename S::V b) {
    const auto even = S::mul16(a, b);
    const auto odd = S::mul16(S::template srl16<8>(a), S::template srl16<8>(b));
    return S::bit_or(S::bit_and(even, S::set16(0xff)), S::template sll16<8>(odd));
  }
};
// Without a 64-bit multiply (before AVX-512DQ): lo*lo + ((lo*hi + hi*lo) << 32), mod 2^64.
template <class S>
struct MulI64 {
  static typename S::V apply(typename S::V a, typename S::V b) {
    if constexpr (S::kNative64) {
      return S::mul64(a, b);
    } else {
      const auto cross = S::add64(S::mul_lo32(a, S::template srl64<32>(b)),
                                  S::mul_lo32(S::template srl64<32>(a), b));
      return S::add64(S::mul_lo32(a, b), S::template sll64<32>(cross));
    }
  }
};
// 64-bit min/max; without them, compare + blend (unsigned compares flip the sign bit first).
template <class S, bool kSigned>
typename S::V gt64(typename S::V a, typename S::V b) {
  if constexpr (!kSigned) {
    const auto flip = S::set64(static_cast<long long>(0x8000000000000000ull));
    a = S::bit_xor(a, flip);
    b = S::bit_xor(b, flip);
  }
  return S::gt_s64(a, b);
}
template <class S, bool kSigned>
struct Min64 {
  static typename S::V apply(typename S::V a, typename S::V b) {
    if constexpr (!S::kNative64) return S::blend8(a, b, gt64<S, kSigned>(a, b));
    else if constexpr (kSigned) return S::min_s64(a, b);
    else return S::min_u64(a, b);
  }
};
template <class S, bool kSigned>
struct Max64 {
  static typename S::V apply(typename S::V a, typename S::V b) {
    if constexpr (!S::kNative64) return S::blend8(a, b, gt64<S, kSigned>(b, a));
    else if constexpr (kSigned) return S::max_s64(a, b);
    else return S::max_u64(a, b);
  }
};

// --- float32 / float64: sum/prod canonicalise NaN; min(a,b) = minps(b,a) = b < a ? b : a ---
template <class S>
typename S::F canon(typename S::F r) {
  return S::where_nan(r, S::ps(S::set32(static_cast<int>(kCanonicalNan32))));
}
template <class S>
typename S::D canon(typename S::D r) {
  return S::where_nan(r, S::pd(S::set64(static_cast<long long>(kCanonicalNan64))));
}
template <class S>
struct Add { template <class T> static T f(T a, T b) { return canon<S>(S::add(a, b)); } };
template <class S>
struct Mul { template <class T> static T f(T a, T b) { return canon<S>(S::mul(a, b)); } };
template <class S>
struct Min { template <class T> static T f(T a, T b) { return S::min(b, a); } };
template <class S>
struct Max { template <class T> static T f(T a, T b) { return S::max(b, a); } };
// The integer lanes as float32 (Ps) or float64 (Pd) lanes.
template <class S, class Fn>
struct Ps {
  static typename S::V apply(typename S::V a, typename S::V b) {
    return S::si(Fn::f(S::ps(a), S::ps(b)));
  }
};
template <class S, class Fn>
struct Pd {
  static typename S::V apply(typename S::V a, typename S::V b) {
    return S::si(Fn::f(S::pd(a), S::pd(b)));
  }
};

// --- fp16 / bf16: one F of elements widened to fp32, combined with Fn, rounded back
// (nearest even) ---
template <class S>
struct Fp16 {
  static typename S::F widen(typename S::H h) { return S::fp16_widen(h); }
  static typename S::H narrow(typename S::F f) { return S::fp16_narrow(f); }
};
// Same bits as bf16_to_float / float_to_bf16 (half.cc), in integer arithmetic.
template <class S>
struct Bf16 {
  static typename S::F widen(typename S::H h) { return S::ps(S::bf16_widen(h)); }
  static typename S::H narrow(typename S::F f) { return S::pack16(bf16_round<S>(S::si(f))); }
};

template <class S, DataType kDt, ReduceOp kOp, class Fn, class C>
void run16(void* dst, const void* a, const void* b, std::size_t n) {
  constexpr std::size_t kLanes = sizeof(typename S::F) / sizeof(float);
  auto* d = static_cast<std::uint16_t*>(dst);
  const auto* x = static_cast<const std::uint16_t*>(a);
  const auto* y = static_cast<const std::uint16_t*>(b);
  std::size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const auto fx = C::widen(S::load_h(x + i));
    const auto fy = C::widen(S::load_h(y + i));
    S::store_h(d + i, C::narrow(Fn::f(fx, fy)));
  }
  if (i < n) scalar_kernel(kDt, kOp)(d + i, x + i, y + i, n - i);
}

template <class S, DataType kDt, std::size_t kElem, class Add, class Mul, class Min, class Max>
ReduceFn pick(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAvg: return run<S, kDt, ReduceOp::kSum, Add, kElem>;
    case ReduceOp::kProd: return run<S, kDt, ReduceOp::kProd, Mul, kElem>;
    case ReduceOp::kMin: return run<S, kDt, ReduceOp::kMin, Min, kElem>;
    case ReduceOp::kMax: return run<S, kDt, ReduceOp::kMax, Max, kElem>;
  }
  return nullptr;
}

template <class S, DataType kDt, class C>
ReduceFn pick16(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAvg: return run16<S, kDt, ReduceOp::kSum, Add<S>, C>;
    case ReduceOp::kProd: return run16<S, kDt, ReduceOp::kProd, Mul<S>, C>;
    case ReduceOp::kMin: return run16<S, kDt, ReduceOp::kMin, Min<S>, C>;
    case ReduceOp::kMax: return run16<S, kDt, ReduceOp::kMax, Max<S>, C>;
  }
  return nullptr;
}

}  // namespace
}  // namespace chorus::kernels

#pragma GCC pop_options

namespace chorus::kernels {
namespace {

template <class S>
ReduceFn level_kernel(DataType dtype, ReduceOp op) {
  using enum DataType;
  switch (dtype) {
    case kInt8:
      return pick<S, kInt8, 1, Lane<S, S::add8>, MulI8<S>, Lane<S, S::min_s8>,
                  Lane<S, S::max_s8>>(op);
    case kUint8:
      return pick<S, kUint8, 1, Lane<S, S::add8>, MulI8<S>, Lane<S, S::min_u8>,
                  Lane<S, S::max_u8>>(op);
    case kInt32:
      return pick<S, kInt32, 4, Lane<S, S::add32>, Lane<S, S::mul32>, Lane<S, S::min_s32>,
                  Lane<S, S::max_s32>>(op);
    case kUint32:
      return pick<S, kUint32, 4, Lane<S, S::add32>, Lane<S, S::mul32>, Lane<S, S::min_u32>,
                  Lane<S, S::max_u32>>(op);
    case kInt64:
      return pick<S, kInt64, 8, Lane<S, S::add64>, MulI64<S>, Min64<S, true>, Max64<S, true>>(op);
    case kUint64:
      return pick<S, kUint64, 8, Lane<S, S::add64>, MulI64<S>, Min64<S, false>,
                  Max64<S, false>>(op);
    case kFloat16:
      if constexpr (S::kFp16) return pick16<S, kFloat16, Fp16<S>>(op);
      return nullptr;
    case kBfloat16: return pick16<S, kBfloat16, Bf16<S>>(op);
    case kFloat32:
      return pick<S, kFloat32, 4, Ps<S, Add<S>>, Ps<S, Mul<S>>, Ps<S, Min<S>>, Ps<S, Max<S>>>(op);
    case kFloat64:
      return pick<S, kFloat64, 8, Pd<S, Add<S>>, Pd<S, Mul<S>>, Pd<S, Min<S>>, Pd<S, Max<S>>>(op);
  }
  return nullptr;
}

ReduceFn this_level(DataType dtype, ReduceOp op) { return level_kernel<Simd>(dtype, op); }

}  // namespace
}  // namespace chorus::kernels

#else  // not x86-64: no kernels at this level, the dispatcher uses scalar

namespace chorus::kernels {
namespace {
ReduceFn this_level(DataType, ReduceOp) { return nullptr; }
}  // namespace
}  // namespace chorus::kernels

#endif

namespace chorus::kernels {
#if CHORUS_ISA == 1
ReduceFn sse_kernel(DataType dtype, ReduceOp op) { return this_level(dtype, op); }
#elif CHORUS_ISA == 2
ReduceFn avx2_kernel(DataType dtype, ReduceOp op) { return this_level(dtype, op); }
#elif CHORUS_ISA == 3
ReduceFn avx512_kernel(DataType dtype, ReduceOp op) { return this_level(dtype, op); }
#endif
}  // namespace chorus::kernels
