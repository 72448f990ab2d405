// element_size() and finalize() (the avg division); reduce() itself lives in dispatch.cc.
#include "kernels/reduce.h"

#include <bit>
#include <cstdint>
#include <cstdlib>
#include <type_traits>

#include "kernels/half.h"
#include "kernels/kernel_table.h"

namespace chorus::kernels {

namespace {

// A NaN quotient becomes the canonical NaN, as in float sum/prod (see kernel_table.h).
float canonical(float f) { return f == f ? f : std::bit_cast<float>(kCanonicalNan32); }
double canonical(double f) { return f == f ? f : std::bit_cast<double>(kCanonicalNan64); }

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
    for (std::size_t i = 0; i < n; ++i) p[i] = canonical(p[i] / div);
  }
}

template <float (*kToFloat)(std::uint16_t), std::uint16_t (*kFromFloat)(float)>
void divide16(void* buf, std::size_t n, int nranks) {
  auto* p = static_cast<std::uint16_t*>(buf);
  const float div = static_cast<float>(nranks);
  for (std::size_t i = 0; i < n; ++i) p[i] = kFromFloat(canonical(kToFloat(p[i]) / div));
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
