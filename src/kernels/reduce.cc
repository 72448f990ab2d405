// Reduction kernels: dispatch on (dtype, op) to scalar, compiler-vectorisable loops.
#include "kernels/reduce.h"

#include <cstdint>
#include <cstdlib>
#include <type_traits>

#include "kernels/half.h"

namespace chorus::kernels {

namespace {

// Combining functors. Integers sum/multiply in the unsigned type (wrap, no UB).
template <class T>
struct Sum {
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
    } else {
      return a + b;
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
      return a * b;
    }
  }
};
template <class T>
struct Min {
  T operator()(T a, T b) const { return b < a ? b : a; }
};
template <class T>
struct Max {
  T operator()(T a, T b) const { return a < b ? b : a; }
};

template <class T, class Op>
void loop(T* dst, const T* a, const T* b, std::size_t n, Op op) {
  for (std::size_t i = 0; i < n; ++i) dst[i] = op(a[i], b[i]);
}

template <class T>
void reduce_typed(void* dst, const void* a, const void* b, std::size_t n, ReduceOp op) {
  T* d = static_cast<T*>(dst);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAvg: return loop(d, x, y, n, Sum<T>{});
    case ReduceOp::kProd: return loop(d, x, y, n, Prod<T>{});
    case ReduceOp::kMin: return loop(d, x, y, n, Min<T>{});
    case ReduceOp::kMax: return loop(d, x, y, n, Max<T>{});
  }
  std::abort();  // REQUIRES violated: invalid op
}

// fp16 / bf16: widen both inputs to fp32, combine, round back once (nearest even).
template <float (*kToFloat)(std::uint16_t), std::uint16_t (*kFromFloat)(float), class Op>
void loop16(std::uint16_t* d, const std::uint16_t* x, const std::uint16_t* y, std::size_t n, Op op) {
  for (std::size_t i = 0; i < n; ++i) d[i] = kFromFloat(op(kToFloat(x[i]), kToFloat(y[i])));
}

template <float (*kToFloat)(std::uint16_t), std::uint16_t (*kFromFloat)(float)>
void reduce16(void* dst, const void* a, const void* b, std::size_t n, ReduceOp op) {
  auto* d = static_cast<std::uint16_t*>(dst);
  const auto* x = static_cast<const std::uint16_t*>(a);
  const auto* y = static_cast<const std::uint16_t*>(b);
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAvg: return loop16<kToFloat, kFromFloat>(d, x, y, n, Sum<float>{});
    case ReduceOp::kProd: return loop16<kToFloat, kFromFloat>(d, x, y, n, Prod<float>{});
    case ReduceOp::kMin: return loop16<kToFloat, kFromFloat>(d, x, y, n, Min<float>{});
    case ReduceOp::kMax: return loop16<kToFloat, kFromFloat>(d, x, y, n, Max<float>{});
  }
  std::abort();
}

template <class T>
void divide_typed(void* buf, std::size_t n, int nranks) {
  T* p = static_cast<T*>(buf);
  if constexpr (std::is_integral_v<T>) {
    // Divide in 64 bits (nranks may not fit T); signed division truncates toward zero,
    // and nranks >= 1 rules out INT64_MIN / -1.
    using W = std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>;
    const W div = static_cast<W>(nranks);
    for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<T>(static_cast<W>(p[i]) / div);
  } else {
    const T div = static_cast<T>(nranks);
    for (std::size_t i = 0; i < n; ++i) p[i] = p[i] / div;
  }
}

template <float (*kToFloat)(std::uint16_t), std::uint16_t (*kFromFloat)(float)>
void divide16(void* buf, std::size_t n, int nranks) {
  auto* p = static_cast<std::uint16_t*>(buf);
  const float div = static_cast<float>(nranks);
  for (std::size_t i = 0; i < n; ++i) p[i] = kFromFloat(kToFloat(p[i]) / div);
}

}  // namespace

std::size_t element_size(DataType dtype) {
  switch (dtype) {
    case DataType::kInt8:
    case DataType::kUint8: return 1;
    case DataType::kFloat16:
    case DataType::kBfloat16: return 2;
    case DataType::kInt32:
    case DataType::kUint32:
    case DataType::kFloat32: return 4;
    case DataType::kInt64:
    case DataType::kUint64:
    case DataType::kFloat64: return 8;
  }
  return 0;
}

void reduce(void* dst, const void* a, const void* b, std::size_t count, DataType dtype,
            ReduceOp op) {
  switch (dtype) {
    case DataType::kInt8: return reduce_typed<std::int8_t>(dst, a, b, count, op);
    case DataType::kUint8: return reduce_typed<std::uint8_t>(dst, a, b, count, op);
    case DataType::kInt32: return reduce_typed<std::int32_t>(dst, a, b, count, op);
    case DataType::kUint32: return reduce_typed<std::uint32_t>(dst, a, b, count, op);
    case DataType::kInt64: return reduce_typed<std::int64_t>(dst, a, b, count, op);
    case DataType::kUint64: return reduce_typed<std::uint64_t>(dst, a, b, count, op);
    case DataType::kFloat16: return reduce16<half_to_float, float_to_half>(dst, a, b, count, op);
    case DataType::kBfloat16: return reduce16<bf16_to_float, float_to_bf16>(dst, a, b, count, op);
    case DataType::kFloat32: return reduce_typed<float>(dst, a, b, count, op);
    case DataType::kFloat64: return reduce_typed<double>(dst, a, b, count, op);
  }
  std::abort();  // REQUIRES violated: invalid dtype
}

void finalize(void* buf, std::size_t count, DataType dtype, ReduceOp op, int nranks) {
  if (op != ReduceOp::kAvg || count == 0) return;
  if (nranks < 1) std::abort();  // REQUIRES violated
  switch (dtype) {
    case DataType::kInt8: return divide_typed<std::int8_t>(buf, count, nranks);
    case DataType::kUint8: return divide_typed<std::uint8_t>(buf, count, nranks);
    case DataType::kInt32: return divide_typed<std::int32_t>(buf, count, nranks);
    case DataType::kUint32: return divide_typed<std::uint32_t>(buf, count, nranks);
    case DataType::kInt64: return divide_typed<std::int64_t>(buf, count, nranks);
    case DataType::kUint64: return divide_typed<std::uint64_t>(buf, count, nranks);
    case DataType::kFloat16: return divide16<half_to_float, float_to_half>(buf, count, nranks);
    case DataType::kBfloat16: return divide16<bf16_to_float, float_to_bf16>(buf, count, nranks);
    case DataType::kFloat32: return divide_typed<float>(buf, count, nranks);
    case DataType::kFloat64: return divide_typed<double>(buf, count, nranks);
  }
  std::abort();
}

}  // namespace chorus::kernels
