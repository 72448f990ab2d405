// Exact test inputs and reference results for the collective tests (see reference.h).
#include "reference.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace chorus::mp {
namespace {

constexpr std::size_t kGuard = 64;
constexpr unsigned char kGuardByte = 0xA5;

bool is_signed(DataType t) {
  return t == DataType::kInt8 || t == DataType::kInt32 || t == DataType::kInt64 || is_float(t);
}

// Large offsets make 32/64-bit integer results wrong if a kernel goes through float/double.
std::int64_t offset(DataType t) {
  switch (t) {
    case DataType::kInt32:
    case DataType::kUint32:
      return std::int64_t{1} << 26;
    case DataType::kInt64:
    case DataType::kUint64:
      return std::int64_t{1} << 56;
    default:
      return 0;
  }
}

std::int64_t base(DataType t, int rank, std::size_t i, int salt) {
  auto v = static_cast<std::int64_t>((i * 7 + static_cast<std::size_t>(rank) * 13 +
                                      static_cast<std::size_t>(salt) * 5) % 16);
  return is_signed(t) ? v - 8 : v;
}

// Integer value before scaling: floats hold value * 0.25 (prod: * 1).
std::int64_t input(DataType t, ReduceOp op, int rank, int n, std::size_t i, int salt) {
  if (op == ReduceOp::kProd) {
    std::int64_t v = (static_cast<std::size_t>(rank) + i + salt) % 3 == 0 ? 2 : 1;
    if (is_signed(t) && (static_cast<std::size_t>(rank) + 2 * i + salt) % 5 == 0) v = -v;
    return v;
  }
  if (op == ReduceOp::kAvg && is_float(t)) {
    // b + d(rank) with sum over ranks of d == 0: the sum is n * b, the mean exactly b.
    std::int64_t b = static_cast<std::int64_t>((i * 7 + salt * 5) % 16) - 8;
    auto d = [&](int r) { return static_cast<std::int64_t>((r + i) % 3) - 1; };
    if (rank < n - 1) return b + d(rank);
    std::int64_t s = 0;
    for (int r = 0; r < n - 1; ++r) s += d(r);
    return b - s;
  }
  return base(t, rank, i, salt) + offset(t);
}

std::uint16_t float_to_half_exact(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000);
  if ((x & 0x7fffffff) == 0) return sign;
  int exp = static_cast<int>((x >> 23) & 0xff) - 127 + 15;
  if (exp <= 0 || exp >= 31 || (x & 0x1fff) != 0) throw std::logic_error("test value not fp16");
  return static_cast<std::uint16_t>(sign | (exp << 10) | ((x & 0x7fffff) >> 13));
}

float half_to_float(std::uint16_t h) {
  int exp = (h >> 10) & 0x1f;
  int mant = h & 0x3ff;
  float v = exp == 0 ? std::ldexp(static_cast<float>(mant), -24)
            : exp == 31 ? (mant ? NAN : INFINITY)
                        : std::ldexp(static_cast<float>(mant | 0x400), exp - 25);
  return (h & 0x8000) ? -v : v;
}

void encode(DataType t, ReduceOp op, std::int64_t v, unsigned char* dst) {
  double f = static_cast<double>(v) * (op == ReduceOp::kProd ? 1.0 : 0.25);
  switch (t) {
    case DataType::kInt8: { auto x = static_cast<std::int8_t>(v); std::memcpy(dst, &x, 1); break; }
    case DataType::kUint8: { auto x = static_cast<std::uint8_t>(v); std::memcpy(dst, &x, 1); break; }
    case DataType::kInt32: { auto x = static_cast<std::int32_t>(v); std::memcpy(dst, &x, 4); break; }
    case DataType::kUint32: { auto x = static_cast<std::uint32_t>(v); std::memcpy(dst, &x, 4); break; }
    case DataType::kInt64: std::memcpy(dst, &v, 8); break;
    case DataType::kUint64: { auto x = static_cast<std::uint64_t>(v); std::memcpy(dst, &x, 8); break; }
    case DataType::kFloat16: {
      auto x = float_to_half_exact(static_cast<float>(f));
      std::memcpy(dst, &x, 2);
      break;
    }
    case DataType::kBfloat16: {
      float g = static_cast<float>(f);
      std::uint32_t bits;
      std::memcpy(&bits, &g, 4);
      auto x = static_cast<std::uint16_t>(bits >> 16);
      std::memcpy(dst, &x, 2);
      break;
    }
    case DataType::kFloat32: { auto x = static_cast<float>(f); std::memcpy(dst, &x, 4); break; }
    case DataType::kFloat64: std::memcpy(dst, &f, 8); break;
  }
}

std::string format_element(DataType t, const unsigned char* p) {
  char buf[96];
  std::uint64_t raw = 0;
  std::memcpy(&raw, p, elem_size(t));
  double v = 0;
  switch (t) {
    case DataType::kInt8: v = static_cast<std::int8_t>(raw); break;
    case DataType::kUint8: v = static_cast<std::uint8_t>(raw); break;
    case DataType::kInt32: v = static_cast<std::int32_t>(raw); break;
    case DataType::kUint32: v = static_cast<std::uint32_t>(raw); break;
    case DataType::kInt64:
      std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(raw));
      return buf;
    case DataType::kUint64:
      std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(raw));
      return buf;
    case DataType::kFloat16: v = half_to_float(static_cast<std::uint16_t>(raw)); break;
    case DataType::kBfloat16: {
      std::uint32_t bits = static_cast<std::uint32_t>(raw) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      v = f;
      break;
    }
    case DataType::kFloat32: { float f; std::memcpy(&f, p, 4); v = f; break; }
    case DataType::kFloat64: std::memcpy(&v, p, 8); break;
  }
  std::snprintf(buf, sizeof buf, "%.17g (0x%llx)", v, static_cast<unsigned long long>(raw));
  return buf;
}

}  // namespace

std::size_t elem_size(DataType t) {
  switch (t) {
    case DataType::kInt8: case DataType::kUint8: return 1;
    case DataType::kFloat16: case DataType::kBfloat16: return 2;
    case DataType::kInt32: case DataType::kUint32: case DataType::kFloat32: return 4;
    default: return 8;
  }
}

bool is_float(DataType t) {
  return t == DataType::kFloat16 || t == DataType::kBfloat16 || t == DataType::kFloat32 ||
         t == DataType::kFloat64;
}

std::size_t big_count(DataType t, int blocks) {
  return (std::size_t{4} << 20) / elem_size(t) / blocks + 1031;
}

void fill_reduce_input(DataType t, ReduceOp op, int rank, int n, std::size_t first,
                       std::size_t count, int salt, void* dst) {
  auto* out = static_cast<unsigned char*>(dst);
  const std::size_t es = elem_size(t);
  for (std::size_t k = 0; k < count; ++k)
    encode(t, op, input(t, op, rank, n, first + k, salt), out + k * es);
}

void fill_reduce_expected(DataType t, ReduceOp op, int n, std::size_t first, std::size_t count,
                          int salt, void* dst) {
  auto* out = static_cast<unsigned char*>(dst);
  const std::size_t es = elem_size(t);
  for (std::size_t k = 0; k < count; ++k) {
    std::size_t i = first + k;
    std::int64_t acc = input(t, op, 0, n, i, salt);
    for (int r = 1; r < n; ++r) {
      std::int64_t v = input(t, op, r, n, i, salt);
      switch (op) {
        case ReduceOp::kSum: case ReduceOp::kAvg: acc += v; break;
        case ReduceOp::kProd: acc *= v; break;
        case ReduceOp::kMin: acc = std::min(acc, v); break;
        case ReduceOp::kMax: acc = std::max(acc, v); break;
      }
    }
    if (op == ReduceOp::kAvg) acc /= n;  // truncates toward zero; exact for float inputs
    encode(t, op, acc, out + k * es);
  }
}

void fill_pattern(DataType t, int rank, std::size_t first, std::size_t count, int salt,
                  void* dst) {
  auto* out = static_cast<unsigned char*>(dst);
  const std::size_t es = elem_size(t);
  for (std::size_t k = 0; k < count; ++k) {
    std::uint64_t h = (first + k) * 0x9E3779B97F4A7C15ull ^
                      (static_cast<std::uint64_t>(rank) << 48) ^ (static_cast<std::uint64_t>(salt) << 32);
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    std::memcpy(out + k * es, &h, es);
  }
}

std::string compare(DataType t, const void* got, const void* expected, std::size_t count) {
  const std::size_t es = elem_size(t);
  if (count == 0 || std::memcmp(got, expected, count * es) == 0) return "";
  auto* g = static_cast<const unsigned char*>(got);
  auto* e = static_cast<const unsigned char*>(expected);
  std::size_t first = count, bad = 0;
  for (std::size_t k = 0; k < count; ++k) {
    if (std::memcmp(g + k * es, e + k * es, es) == 0) continue;
    if (first == count) first = k;
    ++bad;
  }
  return "element " + std::to_string(first) + ": got " + format_element(t, g + first * es) +
         ", expected " + format_element(t, e + first * es) + " (" + std::to_string(bad) + " of " +
         std::to_string(count) + " elements differ)";
}

std::uint64_t hash_bytes(const void* p, std::size_t n, std::uint64_t seed) {
  std::uint64_t h = seed ^ 0xcbf29ce484222325ull;
  auto* b = static_cast<const unsigned char*>(p);
  for (std::size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}

std::string label(const char* coll, DataType t, const char* op, std::size_t count,
                  const char* placement, int root) {
  std::string s = std::string(coll) + " " + to_string(t);
  if (op && *op) s += std::string(" ") + op;
  s += " count=" + std::to_string(count);
  if (placement && *placement) s += std::string(" ") + placement;
  if (root >= 0) s += " root=" + std::to_string(root);
  return s;
}

Buffer::Buffer(DataType t, std::size_t count)
    : elem_(elem_size(t)), size_(count * elem_), bytes_(size_ + kGuard, kGuardByte) {
  std::memset(bytes_.data(), 0xCD, size_);
}

void Buffer::fill(unsigned char b) { std::memset(bytes_.data(), b, size_); }

std::string Buffer::guard_damage(const std::string& what) const {
  for (std::size_t i = size_; i < bytes_.size(); ++i) {
    if (bytes_[i] != kGuardByte)
      return what + ": wrote past the end of the buffer (byte " + std::to_string(i - size_) +
             " after it)";
  }
  return "";
}

}  // namespace chorus::mp
