// Scalar reduction kernels: the reference semantics that every SIMD level reproduces bit for bit.
#include <bit>
#include <cstdint>
#include <type_traits>

#include "kernels/half.h"
#include "kernels/kernel_table.h"

namespace chorus::kernels {
namespace {

template <class T>
T canonical_nan() {
  if constexpr (sizeof(T) == 4) {
    return std::bit_cast<T>(kCanonicalNan32);
  } else {
    return std::bit_cast<T>(kCanonicalNan64);
  }
}

// Integers sum/multiply in the unsigned type (wrap, no UB); floats return the canonical NaN
// for any NaN result.
template <class T>
struct Sum {
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
    } else {
      const T r = a + b;
      return r == r ? r : canonical_nan<T>();
    }
  }
};
template <class T>
struct Prod {
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      // Promote narrow types to unsigned int so the multiply itself never overflows int.
      using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
      return static_cast<T>(static_cast<U>(static_cast<W>(static_cast<U>(a)) *
                                            static_cast<W>(static_cast<U>(b))));
    } else {
      const T r = a * b;
      return r == r ? r : canonical_nan<T>();
    }
  }
};
// min/max: with a NaN operand, or two equal ones (-0.0 vs +0.0), the result is `a`. This is
// exactly x86 minps(b, a) / maxps(b, a), which the SIMD levels use.
template <class T>
struct Min {
  T operator()(T a, T b) const { return b < a ? b : a; }
};
template <class T>
struct Max {
  T operator()(T a, T b) const { return a < b ? b : a; }
};

template <class T, class Op>
void loop(void* dst, const void* a, const void* b, std::size_t n) {
  T* d = static_cast<T*>(dst);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  for (std::size_t i = 0; i < n; ++i) d[i] = Op{}(x[i], y[i]);
}

// fp16 / bf16: widen both inputs to fp32, combine, round back once (nearest even).
template <float (*kToFloat)(std::uint16_t), std::uint16_t (*kFromFloat)(float), class Op>
void loop16(void* dst, const void* a, const void* b, std::size_t n) {
  auto* d = static_cast<std::uint16_t*>(dst);
  const auto* x = static_cast<const std::uint16_t*>(a);
  const auto* y = static_cast<const std::uint16_t*>(b);
  for (std::size_t i = 0; i < n; ++i) d[i] = kFromFloat(Op{}(kToFloat(x[i]), kToFloat(y[i])));
}

template <class T>
ReduceFn typed(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAvg: return loop<T, Sum<T>>;
    case ReduceOp::kProd: return loop<T, Prod<T>>;
    case ReduceOp::kMin: return loop<T, Min<T>>;
    case ReduceOp::kMax: return loop<T, Max<T>>;
  }
  return nullptr;
}

template <float (*kToFloat)(std::uint16_t), std::uint16_t (*kFromFloat)(float)>
ReduceFn typed16(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAvg: return loop16<kToFloat, kFromFloat, Sum<float>>;
    case ReduceOp::kProd: return loop16<kToFloat, kFromFloat, Prod<float>>;
    case ReduceOp::kMin: return loop16<kToFloat, kFromFloat, Min<float>>;
    case ReduceOp::kMax: return loop16<kToFloat, kFromFloat, Max<float>>;
  }
  return nullptr;
}

}  // namespace

ReduceFn scalar_kernel(DataType dtype, ReduceOp op) {
  switch (dtype) {
    case DataType::kInt8: return typed<std::int8_t>(op);
    case DataType::kUint8: return typed<std::uint8_t>(op);
    case DataType::kInt32: return typed<std::int32_t>(op);
    case DataType::kUint32: return typed<std::uint32_t>(op);
    case DataType::kInt64: return typed<std::int64_t>(op);
    case DataType::kUint64: return typed<std::uint64_t>(op);
    case DataType::kFloat16: return typed16<half_to_float, float_to_half>(op);
    case DataType::kBfloat16: return typed16<bf16_to_float, float_to_bf16>(op);
    case DataType::kFloat32: return typed<float>(op);
    case DataType::kFloat64: return typed<double>(op);
  }
  return nullptr;
}

}  // namespace chorus::kernels
