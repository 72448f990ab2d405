// Every kernel level x dtype x op x count x aliasing, bit-exact against the scalar level, on
// random inputs rich in special values (NaN, inf, +-0, denormals, extremes); plus the level API.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/half.h"
#include "kernels/isa.h"
#include "kernels/reduce.h"

namespace chorus::kernels {
namespace {

using Bytes = std::vector<unsigned char>;

// Bit patterns worth hitting for each element size / float format.
std::vector<std::uint64_t> specials(DataType dt) {
  switch (dt) {
    case DataType::kFloat16:
      return {0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x7bff, 0xfbff, 0x7c00, 0xfc00,
              0x7e00, 0xfe00, 0x7c01, 0x7d55, 0xffff, 0x3c00, 0xbc00, 0x3555, 0x6800};
    case DataType::kBfloat16:
      return {0x0000, 0x8000, 0x0001, 0x8001, 0x007f, 0x0080, 0x7f7f, 0xff7f, 0x7f80, 0xff80,
              0x7fc0, 0xffc0, 0x7f81, 0x7fa5, 0xffff, 0x3f80, 0xbf80, 0x3eab, 0x4b00};
    case DataType::kFloat32:
      return {0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007fffff, 0x00800000,
              0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000,
              0x7f800001, 0x7fa5a5a5, 0xffffffff, 0x3f800000, 0xbf800000, 0x3eaaaaab};
    case DataType::kFloat64:
      return {0, 0x8000000000000000, 1, 0x8000000000000001, 0x000fffffffffffff,
              0x0010000000000000, 0x7fefffffffffffff, 0xffefffffffffffff, 0x7ff0000000000000,
              0xfff0000000000000, 0x7ff8000000000000, 0xfff8000000000000, 0x7ff0000000000001,
              0x7ff5a5a5a5a5a5a5, 0xffffffffffffffff, 0x3ff0000000000000, 0xbff0000000000000};
    default:  // integers: 0, +-1, 2, extremes (truncated to the element size when stored)
      return {0, 1, ~0ull, 2, 0x7f, 0x80, 0xff, 0x7fffffff, 0x80000000, 0xffffffff,
              0x7fffffffffffffff, 0x8000000000000000};
  }
}

// A "moderate" value: a small float or integer, so sums and products stay mostly finite.
std::uint64_t moderate(DataType dt, std::mt19937_64& rng) {
  const float f = static_cast<float>(static_cast<int>(rng() % 2001) - 1000) / 8.0f;
  switch (dt) {
    case DataType::kFloat16: return float_to_half(f);
    case DataType::kBfloat16: return float_to_bf16(f);
    case DataType::kFloat32: return std::bit_cast<std::uint32_t>(f);
    case DataType::kFloat64: return std::bit_cast<std::uint64_t>(static_cast<double>(f));
    default: return static_cast<std::uint64_t>(static_cast<std::int64_t>(rng() % 41) - 20);
  }
}

Bytes random_buffer(DataType dt, std::size_t n, std::mt19937_64& rng) {
  const std::size_t es = element_size(dt);
  const auto sp = specials(dt);
  Bytes out(n * es);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t v = rng();
    switch (rng() % 4) {
      case 0: v = sp[rng() % sp.size()]; break;
      case 1: v = moderate(dt, rng); break;
      default: break;  // random bits
    }
    std::memcpy(&out[i * es], &v, es);  // little endian: the low bytes
  }
  return out;
}

// Output of reduce_with(isa) with dst = fresh buffer (alias 0), dst == a (1) or dst == b (2).
Bytes run_at(Isa isa, const Bytes& a, const Bytes& b, std::size_t n, DataType dt, ReduceOp op,
             int alias) {
  Bytes x = a, y = b, fresh(a.size(), 0xcd);
  void* dst = alias == 1 ? x.data() : alias == 2 ? y.data() : fresh.data();
  EXPECT_TRUE(reduce_with(isa, dst, x.data(), y.data(), n, dt, op));
  return alias == 1 ? x : alias == 2 ? y : fresh;
}

using Param = std::tuple<Isa, DataType, ReduceOp>;

class ReduceIsa : public testing::TestWithParam<Param> {};

TEST_P(ReduceIsa, BitIdenticalToScalar) {
  const auto [isa, dt, op] = GetParam();
  std::mt19937_64 rng(static_cast<std::uint64_t>(dt) * 131 + static_cast<std::uint64_t>(op));
  for (std::size_t n : {0, 1, 7, 15, 16, 17, 63, 1031, 100003}) {
    const Bytes a = random_buffer(dt, n, rng), b = random_buffer(dt, n, rng);
    const Bytes want = run_at(Isa::kScalar, a, b, n, dt, op, 0);
    for (int alias = 0; alias < 3; ++alias) {
      const Bytes got = run_at(isa, a, b, n, dt, op, alias);
      ASSERT_EQ(got.size(), want.size());
      const std::size_t es = element_size(dt);
      for (std::size_t i = 0; i < n; ++i) {
        if (std::memcmp(&got[i * es], &want[i * es], es) != 0) {
          std::uint64_t g = 0, w = 0, x = 0, y = 0;
          std::memcpy(&g, &got[i * es], es);
          std::memcpy(&w, &want[i * es], es);
          std::memcpy(&x, &a[i * es], es);
          std::memcpy(&y, &b[i * es], es);
          FAIL() << "count " << n << " alias " << alias << " element " << i << std::hex
                 << ": a=0x" << x << " b=0x" << y << " got 0x" << g << " want 0x" << w;
        }
      }
    }
  }
}

// fp16 / bf16: every bit pattern against a permutation of every bit pattern.
class ReduceIsa16 : public ReduceIsa {};

TEST_P(ReduceIsa16, Every16BitPattern) {
  const auto [isa, dt, op] = GetParam();
  const std::size_t n = 65536;
  Bytes a(2 * n), b(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto x = static_cast<std::uint16_t>(i);
    const auto y = static_cast<std::uint16_t>((i * 40503u + 12345u) & 0xffffu);
    std::memcpy(&a[2 * i], &x, 2);
    std::memcpy(&b[2 * i], &y, 2);
  }
  EXPECT_EQ(run_at(isa, a, b, n, dt, op, 0), run_at(Isa::kScalar, a, b, n, dt, op, 0));
  EXPECT_EQ(run_at(isa, b, a, n, dt, op, 0), run_at(Isa::kScalar, b, a, n, dt, op, 0));
}

std::string param_name(const testing::TestParamInfo<Param>& info) {
  const auto [isa, dt, op] = info.param;
  // chorus::to_string lives in the api room, which kernels tests do not link.
  static const char* const kTypes[] = {"int8",    "uint8",    "int32",   "uint32",  "int64",
                                       "uint64",  "float16",  "bfloat16", "float32", "float64"};
  static const char* const kOps[] = {"sum", "prod", "min", "max", "avg"};
  return std::string(isa_name(isa)) + "_" + kTypes[static_cast<int>(dt)] + "_" +
         kOps[static_cast<int>(op)];
}

// Every level this CPU runs x dtype x op (levels it lacks are not instantiated, so nothing
// is skipped); `only_16bit` keeps fp16 and bf16.
std::vector<Param> all_params(bool only_16bit = false) {
  std::vector<Param> out;
  for (int l = 0; l < kNumIsas; ++l) {
    if (!cpu_supports(static_cast<Isa>(l))) continue;
    for (int d = 0; d < kNumDataTypes; ++d) {
      if (only_16bit && element_size(static_cast<DataType>(d)) != 2) continue;
      for (int o = 0; o < kNumReduceOps; ++o) {
        out.emplace_back(static_cast<Isa>(l), static_cast<DataType>(d), static_cast<ReduceOp>(o));
      }
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(All, ReduceIsa, testing::ValuesIn(all_params()), param_name);
INSTANTIATE_TEST_SUITE_P(All, ReduceIsa16, testing::ValuesIn(all_params(true)), param_name);

}  // namespace
}  // namespace chorus::kernels
