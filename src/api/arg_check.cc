// Argument checks of the public collectives.
#include "api/arg_check.h"

#include <cstdint>

#include "util/strings.h"

namespace chorus::api {

Status check_dtype(DataType dtype) {
  if (!is_valid(dtype))
    return invalid_argument(str_printf("dtype %d is not a chorus::DataType", static_cast<int>(dtype)));
  return Status();
}

Status check_op(ReduceOp op) {
  if (!is_valid(op))
    return invalid_argument(str_printf("op %d is not a chorus::ReduceOp", static_cast<int>(op)));
  return Status();
}

Status check_count(const char* name, std::size_t count, DataType dtype, std::size_t multiplier) {
  // No buffer can exceed the 47-bit user address space of x86-64 / arm64 Linux.
  constexpr std::size_t max_bytes = std::size_t{1} << 47;
  const std::size_t unit = dtype_size(dtype) * (multiplier ? multiplier : 1);
  if (count > max_bytes / unit)
    return invalid_argument(str_printf(
        "%s=%zu is too large for %s (buffers would exceed 2^47 bytes; was a negative value passed?)",
        name, count, to_string(dtype)));
  return Status();
}

Status check_buffer(const char* name, const void* buf, std::size_t count) {
  if (buf == nullptr && count > 0)
    return invalid_argument(str_printf("%s is null but count is %zu", name, count));
  return Status();
}

Status check_rank(const char* name, int value, int size) {
  if (value < 0 || value >= size)
    return invalid_argument(str_printf("%s=%d is out of range [0, %d)", name, value, size));
  return Status();
}

Status check_v_spans(const char* counts_name, std::span<const std::size_t> counts,
                     const char* displs_name, std::span<const std::size_t> displs, int size,
                     DataType dtype, std::size_t* extent) {
  if (counts.size() != static_cast<std::size_t>(size))
    return invalid_argument(str_printf("%s has %zu entries, expected %d (one per rank)",
                                       counts_name, counts.size(), size));
  if (displs.size() != static_cast<std::size_t>(size))
    return invalid_argument(str_printf("%s has %zu entries, expected %d (one per rank)",
                                       displs_name, displs.size(), size));
  std::size_t end_max = 0;
  for (int p = 0; p < size; ++p) {
    CHORUS_RETURN_IF_ERROR(check_count(counts_name, counts[p], dtype, 1));
    CHORUS_RETURN_IF_ERROR(check_count(displs_name, displs[p], dtype, 1));
    std::size_t end = counts[p] + displs[p];
    CHORUS_RETURN_IF_ERROR(check_count(displs_name, end, dtype, 1));
    if (counts[p] > 0 && end > end_max) end_max = end;
  }
  *extent = end_max;
  return Status();
}

}  // namespace chorus::api
