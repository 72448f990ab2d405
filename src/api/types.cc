// Names, sizes and parsing of the public DataType and ReduceOp enums.
#include <string>

#include "chorus/types.h"

namespace chorus {

namespace {
struct TypeRow {
  DataType type;
  std::size_t size;
  const char* name;
};
constexpr TypeRow kTypes[kNumDataTypes] = {
    {DataType::kInt8, 1, "int8"},       {DataType::kUint8, 1, "uint8"},
    {DataType::kInt32, 4, "int32"},     {DataType::kUint32, 4, "uint32"},
    {DataType::kInt64, 8, "int64"},     {DataType::kUint64, 8, "uint64"},
    {DataType::kFloat16, 2, "float16"}, {DataType::kBfloat16, 2, "bfloat16"},
    {DataType::kFloat32, 4, "float32"}, {DataType::kFloat64, 8, "float64"},
};
constexpr const char* kOps[kNumReduceOps] = {"sum", "prod", "min", "max", "avg"};
}  // namespace

bool is_valid(DataType t) noexcept {
  int v = static_cast<int>(t);
  return v >= 0 && v < kNumDataTypes;
}
bool is_valid(ReduceOp op) noexcept {
  int v = static_cast<int>(op);
  return v >= 0 && v < kNumReduceOps;
}
std::size_t dtype_size(DataType t) noexcept { return is_valid(t) ? kTypes[static_cast<int>(t)].size : 0; }
const char* to_string(DataType t) noexcept { return is_valid(t) ? kTypes[static_cast<int>(t)].name : "invalid"; }
const char* to_string(ReduceOp op) noexcept { return is_valid(op) ? kOps[static_cast<int>(op)] : "invalid"; }

std::optional<DataType> parse_dtype(std::string_view name) noexcept {
  for (const auto& row : kTypes)
    if (name == row.name) return row.type;
  if (name == "half" || name == "fp16") return DataType::kFloat16;
  if (name == "bf16") return DataType::kBfloat16;
  if (name == "float" || name == "fp32") return DataType::kFloat32;
  if (name == "double" || name == "fp64") return DataType::kFloat64;
  if (name == "int") return DataType::kInt32;
  if (name == "uint") return DataType::kUint32;
  if (name == "char") return DataType::kInt8;
  return std::nullopt;
}

std::optional<ReduceOp> parse_reduce_op(std::string_view name) noexcept {
  for (int i = 0; i < kNumReduceOps; ++i)
    if (name == kOps[i]) return static_cast<ReduceOp>(i);
  return std::nullopt;
}

}  // namespace chorus
