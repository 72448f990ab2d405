// Exact inputs and expected outputs of chorus-bench's correctness check (-c 1).
#include "check_values.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace chorus_bench {
namespace {

using chorus::DataType;
using chorus::ReduceOp;
constexpr std::uint8_t kSentinel = 0xA5;  // never a valid encoding of 0..120

// IEEE binary16 bits of a small non-negative integer (exact below 2048).
std::uint16_t half_bits(std::int64_t v) {
  if (v == 0) return 0;
  int e = std::bit_width(static_cast<std::uint64_t>(v)) - 1;
  std::uint64_t mantissa = (static_cast<std::uint64_t>(v) << (10 - e)) & 0x3FF;
  return static_cast<std::uint16_t>(((e + 15) << 10) | mantissa);
}

// Writes `v` (a small non-negative integer) as one element of `t` at `dst`.
void encode(DataType t, std::int64_t v, std::byte* dst) {
  auto put = [dst](auto x) { std::memcpy(dst, &x, sizeof(x)); };
  switch (t) {
    case DataType::kInt8: return put(static_cast<std::int8_t>(v));
    case DataType::kUint8: return put(static_cast<std::uint8_t>(v));
    case DataType::kInt32: return put(static_cast<std::int32_t>(v));
    case DataType::kUint32: return put(static_cast<std::uint32_t>(v));
    case DataType::kInt64: return put(static_cast<std::int64_t>(v));
    case DataType::kUint64: return put(static_cast<std::uint64_t>(v));
    case DataType::kFloat16: return put(half_bits(v));
    case DataType::kBfloat16:
      return put(static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(float(v)) >> 16));
    case DataType::kFloat32: return put(static_cast<float>(v));
    case DataType::kFloat64: return put(static_cast<double>(v));
  }
}

std::int64_t max_term(int nranks) { return std::clamp<std::int64_t>(120 / nranks, 1, 10); }

// avg: value m(j) + d(r), where the offsets d(r) = +1, -1, +1, -1, ... (0 for the
// last rank of an odd count) sum to zero, so the sum is exactly n * m(j).
std::int64_t avg_mean(std::size_t j, int n) {
  std::int64_t span = std::max<std::int64_t>(1, 120 / n - 1);
  return 1 + static_cast<std::int64_t>(j % static_cast<std::size_t>(span));
}
std::int64_t avg_offset(int r, int n) {
  if (n % 2 == 1 && r == n - 1) return 0;
  return r % 2 == 0 ? 1 : -1;
}

// Input element `j` of rank `r`'s send buffer.
std::int64_t input(const CheckSpec& s, int r, std::size_t j) {
  std::size_t n = static_cast<std::size_t>(s.nranks), ur = static_cast<std::size_t>(r);
  if (!has_redop(s.coll)) return static_cast<std::int64_t>((ur * 37 + j) % 101);
  switch (s.op) {
    case ReduceOp::kSum:
      return static_cast<std::int64_t>((j * 7 + ur * 3) % (max_term(s.nranks) + 1));
    case ReduceOp::kProd:
      return (j % (n + 1) == ur || (j / (n + 1)) % (n + 1) == ur) ? 2 : 1;
    case ReduceOp::kMin:
    case ReduceOp::kMax: return static_cast<std::int64_t>((j * 7 + ur * 13) % 101);
    case ReduceOp::kAvg: return avg_mean(j, s.nranks) + avg_offset(r, s.nranks);
  }
  return 0;
}

// Element `j` of the reduction over all ranks.
std::int64_t reduced(const CheckSpec& s, std::size_t j) {
  if (s.op == ReduceOp::kAvg) return avg_mean(j, s.nranks);
  std::int64_t acc = input(s, 0, j);
  for (int r = 1; r < s.nranks; ++r) {
    std::int64_t v = input(s, r, j);
    switch (s.op) {
      case ReduceOp::kSum: acc += v; break;
      case ReduceOp::kProd: acc *= v; break;
      case ReduceOp::kMin: acc = std::min(acc, v); break;
      default: acc = std::max(acc, v); break;
    }
  }
  return acc;
}

// Expected output element `i` on this rank.
std::int64_t expected(const CheckSpec& s, std::size_t i) {
  std::size_t c = s.shape.count, rank = static_cast<std::size_t>(s.rank);
  switch (s.coll) {
    case Coll::kAllReduce:
    case Coll::kReduce: return reduced(s, i);
    case Coll::kReduceScatter: return reduced(s, rank * c + i);
    case Coll::kBroadcast: return input(s, s.root, i);
    case Coll::kAllGather:
    case Coll::kGather: return input(s, static_cast<int>(i / c), i % c);
    case Coll::kAllToAll: return input(s, static_cast<int>(i / c), rank * c + i % c);
    case Coll::kScatter: return input(s, s.root, rank * c + i);
  }
  return 0;
}

// True when this rank's send buffer is read (root-only inputs elsewhere are not).
bool reads_input(const CheckSpec& s) {
  bool root_only = s.coll == Coll::kBroadcast || s.coll == Coll::kScatter;
  return !root_only || s.rank == s.root;
}

// True when this rank has an output to check.
bool has_output(const CheckSpec& s) {
  bool root_only = s.coll == Coll::kReduce || s.coll == Coll::kGather;
  return !root_only || s.rank == s.root;
}

}  // namespace

void fill_buffers(const CheckSpec& s, const Layout& l, std::byte* b) {
  std::size_t es = chorus::dtype_size(s.dtype);
  std::size_t b_elems = std::max(s.shape.in_elems, s.shape.out_elems);
  std::memset(b, kSentinel, b_elems * es);  // recv always lies in `b`
  if (!reads_input(s)) return;
  for (std::size_t j = 0; j < s.shape.in_elems; ++j) encode(s.dtype, input(s, s.rank, j), l.send + j * es);
}

std::int64_t count_wrong(const CheckSpec& s, const Layout& l) {
  if (!has_output(s)) return 0;
  std::size_t es = chorus::dtype_size(s.dtype);
  std::byte want[8];
  std::int64_t wrong = 0;
  for (std::size_t i = 0; i < s.shape.out_elems; ++i) {
    encode(s.dtype, expected(s, i), want);
    if (std::memcmp(want, l.recv + i * es, es) != 0) ++wrong;
  }
  return wrong;
}

}  // namespace chorus_bench
