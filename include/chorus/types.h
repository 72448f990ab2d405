// Element types and reduction operators understood by every collective.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "chorus/export.h"

namespace chorus {

// Element type of a buffer. Numeric values are stable (they travel in frames).
enum class DataType : int {
  kInt8 = 0,
  kUint8 = 1,
  kInt32 = 2,
  kUint32 = 3,
  kInt64 = 4,
  kUint64 = 5,
  kFloat16 = 6,   // IEEE 754 binary16
  kBfloat16 = 7,  // bfloat16 (upper half of a float32)
  kFloat32 = 8,
  kFloat64 = 9,
};
inline constexpr int kNumDataTypes = 10;

// Reduction operator. kAvg is the sum divided by the number of ranks; on integer
// types it is the truncated mean (sum / n rounded toward zero; the sum wraps).
// fp16 and bf16 are combined in fp32 and rounded back once per combining step.
enum class ReduceOp : int {
  kSum = 0,
  kProd = 1,
  kMin = 2,
  kMax = 3,
  kAvg = 4,
};
inline constexpr int kNumReduceOps = 5;

// Size in bytes of one element, or 0 when `t` is not a valid DataType.
CHORUS_EXPORT std::size_t dtype_size(DataType t) noexcept;
// True when `t` is one of the enumerators above (guards against casts from bad ints).
CHORUS_EXPORT bool is_valid(DataType t) noexcept;
CHORUS_EXPORT bool is_valid(ReduceOp op) noexcept;
// Short lowercase names: "int8", "uint8", "int32", "uint32", "int64", "uint64",
// "float16", "bfloat16", "float32", "float64"; "sum", "prod", "min", "max", "avg".
// Invalid values give "invalid".
CHORUS_EXPORT const char* to_string(DataType t) noexcept;
CHORUS_EXPORT const char* to_string(ReduceOp op) noexcept;
// Parse the names above; also accepts aliases "half"/"fp16", "bf16", "float"/"fp32",
// "double"/"fp64", "int", "uint". Returns nullopt for an unknown name.
CHORUS_EXPORT std::optional<DataType> parse_dtype(std::string_view name) noexcept;
CHORUS_EXPORT std::optional<ReduceOp> parse_reduce_op(std::string_view name) noexcept;

// Maps a C++ element type to its DataType, for the typed overloads.
template <class T>
struct DataTypeOf;
template <> struct DataTypeOf<std::int8_t> { static constexpr DataType value = DataType::kInt8; };
template <> struct DataTypeOf<std::uint8_t> { static constexpr DataType value = DataType::kUint8; };
template <> struct DataTypeOf<std::int32_t> { static constexpr DataType value = DataType::kInt32; };
template <> struct DataTypeOf<std::uint32_t> { static constexpr DataType value = DataType::kUint32; };
template <> struct DataTypeOf<std::int64_t> { static constexpr DataType value = DataType::kInt64; };
template <> struct DataTypeOf<std::uint64_t> { static constexpr DataType value = DataType::kUint64; };
template <> struct DataTypeOf<float> { static constexpr DataType value = DataType::kFloat32; };
template <> struct DataTypeOf<double> { static constexpr DataType value = DataType::kFloat64; };

}  // namespace chorus
