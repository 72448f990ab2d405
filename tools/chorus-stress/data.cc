// Input values and exact expected results of every stress operation.
#include "data.h"

#include <cstring>

namespace chorus_stress {

namespace {

using chorus::DataType;

// Largest per-rank value that keeps every sum over `n` ranks exact in `dtype`.
std::uint64_t value_range(DataType dtype, int n) {
  const std::uint64_t exact = dtype == DataType::kBfloat16 ? 256 : 1u << 24;
  const std::uint64_t per_rank = exact / static_cast<std::uint64_t>(n);
  return per_rank < 1 ? 1 : per_rank > 13 ? 13 : per_rank;
}

// Element `i` of rank `rank`'s send buffer.
double value(const DataKey& key, int rank, std::size_t i, std::uint64_t range) {
  const std::uint64_t h = static_cast<std::uint64_t>(rank) * 31u +
                          static_cast<std::uint64_t>(key.step) * 7u +
                          static_cast<std::uint64_t>(key.op_index) * 13u + i;
  return static_cast<double>(1 + h % range);
}

void store(DataType dtype, void* buf, std::size_t i, double v) {
  switch (dtype) {
    case DataType::kFloat32: static_cast<float*>(buf)[i] = static_cast<float>(v); break;
    case DataType::kFloat64: static_cast<double*>(buf)[i] = v; break;
    case DataType::kInt32: static_cast<std::int32_t*>(buf)[i] = static_cast<std::int32_t>(v); break;
    case DataType::kInt64: static_cast<std::int64_t*>(buf)[i] = static_cast<std::int64_t>(v); break;
    case DataType::kBfloat16: {  // exact for the small integers used here
      const float f = static_cast<float>(v);
      std::uint32_t bits;
      std::memcpy(&bits, &f, 4);
      static_cast<std::uint16_t*>(buf)[i] = static_cast<std::uint16_t>(bits >> 16);
      break;
    }
    default: break;  // the patterns use only the types above
  }
}

double load(DataType dtype, const void* buf, std::size_t i) {
  switch (dtype) {
    case DataType::kFloat32: return static_cast<const float*>(buf)[i];
    case DataType::kFloat64: return static_cast<const double*>(buf)[i];
    case DataType::kInt32: return static_cast<const std::int32_t*>(buf)[i];
    case DataType::kInt64: return static_cast<double>(static_cast<const std::int64_t*>(buf)[i]);
    case DataType::kBfloat16: {
      const std::uint32_t bits = std::uint32_t{static_cast<const std::uint16_t*>(buf)[i]} << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    default: return 0.0;
  }
}

// The exact value of element `i` of the receive buffer of rank `rank`.
double expected(const OpSpec& op, const DataKey& key, int rank, int n, std::size_t i,
                std::uint64_t range) {
  const std::size_t c = op.count;
  switch (op.kind) {
    case Kind::kAllReduce: {
      double sum = 0;
      for (int r = 0; r < n; ++r) sum += value(key, r, i, range);
      return sum;
    }
    case Kind::kReduceScatter: {
      double sum = 0;
      for (int r = 0; r < n; ++r) sum += value(key, r, static_cast<std::size_t>(rank) * c + i, range);
      return sum;
    }
    case Kind::kAllGather: return value(key, static_cast<int>(i / c), i % c, range);
    case Kind::kAllToAll:
      return value(key, static_cast<int>(i / c), static_cast<std::size_t>(rank) * c + i % c, range);
    case Kind::kBroadcast: return value(key, op.root, i, range);
  }
  return 0.0;
}

}  // namespace

void fill_send(const OpSpec& op, const DataKey& key, int rank, int n, void* send) {
  const std::uint64_t range = value_range(op.dtype, n);
  const std::size_t count = buffer_counts(op, n).send;
  for (std::size_t i = 0; i < count; ++i) store(op.dtype, send, i, value(key, rank, i, range));
}

std::optional<Mismatch> check_recv(const OpSpec& op, const DataKey& key, int rank, int n,
                                   const void* recv) {
  const std::uint64_t range = value_range(op.dtype, n);
  const std::size_t count = buffer_counts(op, n).recv;
  for (std::size_t i = 0; i < count; ++i) {
    const double want = expected(op, key, rank, n, i, range);
    const double got = load(op.dtype, recv, i);
    if (got != want) return Mismatch{i, want, got};
  }
  return std::nullopt;
}

}  // namespace chorus_stress
