// Tests for the reduction kernels: every dtype x op against a scalar reference.
#include "kernels/reduce.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/half.h"

namespace chorus::kernels {
namespace {

template <class T>
std::vector<T> run(const std::vector<T>& a, const std::vector<T>& b, DataType dt, ReduceOp op) {
  std::vector<T> out(a.size());
  reduce(out.data(), a.data(), b.data(), a.size(), dt, op);
  return out;
}

TEST(Reduce, ElementSize) {
  EXPECT_EQ(element_size(DataType::kInt8), 1u);
  EXPECT_EQ(element_size(DataType::kFloat16), 2u);
  EXPECT_EQ(element_size(DataType::kBfloat16), 2u);
  EXPECT_EQ(element_size(DataType::kUint32), 4u);
  EXPECT_EQ(element_size(DataType::kFloat64), 8u);
  EXPECT_EQ(element_size(static_cast<DataType>(42)), 0u);
}

TEST(Reduce, Int32AllOps) {
  std::vector<std::int32_t> a = {1, -5, 7, std::numeric_limits<std::int32_t>::max()};
  std::vector<std::int32_t> b = {2, 3, -9, 1};
  EXPECT_EQ(run(a, b, DataType::kInt32, ReduceOp::kSum),
            (std::vector<std::int32_t>{3, -2, -2, std::numeric_limits<std::int32_t>::min()}));
  EXPECT_EQ(run(a, b, DataType::kInt32, ReduceOp::kAvg),
            (std::vector<std::int32_t>{3, -2, -2, std::numeric_limits<std::int32_t>::min()}));
  EXPECT_EQ(run(a, b, DataType::kInt32, ReduceOp::kProd),
            (std::vector<std::int32_t>{2, -15, -63, std::numeric_limits<std::int32_t>::max()}));
  EXPECT_EQ(run(a, b, DataType::kInt32, ReduceOp::kMin), (std::vector<std::int32_t>{1, -5, -9, 1}));
  EXPECT_EQ(run(a, b, DataType::kInt32, ReduceOp::kMax),
            (std::vector<std::int32_t>{2, 3, 7, std::numeric_limits<std::int32_t>::max()}));
}

TEST(Reduce, NarrowIntegersWrap) {
  std::vector<std::int8_t> a = {100, -128, 16};
  std::vector<std::int8_t> b = {100, -1, 16};
  EXPECT_EQ(run(a, b, DataType::kInt8, ReduceOp::kSum), (std::vector<std::int8_t>{-56, 127, 32}));
  EXPECT_EQ(run(a, b, DataType::kInt8, ReduceOp::kProd), (std::vector<std::int8_t>{16, -128, 0}));
  std::vector<std::uint8_t> c = {255, 200}, d = {255, 100};
  EXPECT_EQ(run(c, d, DataType::kUint8, ReduceOp::kProd), (std::vector<std::uint8_t>{1, 32}));
  std::vector<std::uint64_t> e = {~0ull}, f = {~0ull};
  EXPECT_EQ(run(e, f, DataType::kUint64, ReduceOp::kProd), (std::vector<std::uint64_t>{1}));
  std::vector<std::int64_t> g = {std::numeric_limits<std::int64_t>::min()}, h = {-1};
  EXPECT_EQ(run(g, h, DataType::kInt64, ReduceOp::kProd), g);
}

TEST(Reduce, FloatOps) {
  std::vector<float> a = {1.5f, -2.0f, 3.0f}, b = {2.0f, 4.0f, -1.0f};
  EXPECT_EQ(run(a, b, DataType::kFloat32, ReduceOp::kSum), (std::vector<float>{3.5f, 2.0f, 2.0f}));
  EXPECT_EQ(run(a, b, DataType::kFloat32, ReduceOp::kProd), (std::vector<float>{3.0f, -8.0f, -3.0f}));
  EXPECT_EQ(run(a, b, DataType::kFloat32, ReduceOp::kMin), (std::vector<float>{1.5f, -2.0f, -1.0f}));
  EXPECT_EQ(run(a, b, DataType::kFloat32, ReduceOp::kMax), (std::vector<float>{2.0f, 4.0f, 3.0f}));
  std::vector<double> c = {0.25, 1e300}, d = {0.5, 1e300};
  EXPECT_EQ(run(c, d, DataType::kFloat64, ReduceOp::kSum), (std::vector<double>{0.75, 2e300}));
}

TEST(Reduce, HalfCombinesInFloatAndRounds) {
  // 2048 + 1 in fp16: exact result 2049 is a tie between 2048 and 2050 -> 2048 (even).
  std::vector<std::uint16_t> a = {float_to_half(2048.0f), float_to_half(1.5f)};
  std::vector<std::uint16_t> b = {float_to_half(1.0f), float_to_half(-3.0f)};
  auto s = run(a, b, DataType::kFloat16, ReduceOp::kSum);
  EXPECT_EQ(half_to_float(s[0]), 2048.0f);
  EXPECT_EQ(half_to_float(s[1]), -1.5f);
  auto m = run(a, b, DataType::kFloat16, ReduceOp::kMin);
  EXPECT_EQ(half_to_float(m[1]), -3.0f);
  std::vector<std::uint16_t> c = {float_to_bf16(3.0f)}, d = {float_to_bf16(5.0f)};
  EXPECT_EQ(bf16_to_float(run(c, d, DataType::kBfloat16, ReduceOp::kProd)[0]), 15.0f);
  EXPECT_EQ(bf16_to_float(run(c, d, DataType::kBfloat16, ReduceOp::kMax)[0]), 5.0f);
}

TEST(Reduce, DstMayAliasInput) {
  std::vector<std::int64_t> a = {1, 2, 3}, b = {10, 20, 30};
  reduce(a.data(), a.data(), b.data(), 3, DataType::kInt64, ReduceOp::kSum);
  EXPECT_EQ(a, (std::vector<std::int64_t>{11, 22, 33}));
  reduce(b.data(), a.data(), b.data(), 3, DataType::kInt64, ReduceOp::kMax);
  EXPECT_EQ(b, (std::vector<std::int64_t>{11, 22, 33}));
}

TEST(Reduce, LongBuffersEveryDtype) {
  // Exercises the vectorised body and the tail for every dtype (small values, exact sums).
  for (int d = 0; d < kNumDataTypes; ++d) {
    const auto dt = static_cast<DataType>(d);
    const std::size_t n = 1031, es = element_size(dt);
    std::vector<unsigned char> a(n * es), b(n * es), out(n * es);
    for (std::size_t i = 0; i < n; ++i) {
      const int x = static_cast<int>(i % 7), y = static_cast<int>(i % 5);
      auto put = [&](std::vector<unsigned char>& v, int val) {
        switch (dt) {
          case DataType::kFloat16: { auto h = float_to_half(float(val)); std::memcpy(&v[i * es], &h, 2); break; }
          case DataType::kBfloat16: { auto h = float_to_bf16(float(val)); std::memcpy(&v[i * es], &h, 2); break; }
          case DataType::kFloat32: { float f = float(val); std::memcpy(&v[i * es], &f, 4); break; }
          case DataType::kFloat64: { double f = val; std::memcpy(&v[i * es], &f, 8); break; }
          default: { std::int64_t w = val; std::memcpy(&v[i * es], &w, es); break; }  // little endian
        }
      };
      put(a, x);
      put(b, y);
      put(out, x + y);  // expected, reused below
    }
    std::vector<unsigned char> expect = out;
    reduce(out.data(), a.data(), b.data(), n, dt, ReduceOp::kSum);
    EXPECT_EQ(out, expect) << "dtype " << d;
  }
}

TEST(Finalize, AvgTruncatesTowardZeroForIntegers) {
  std::vector<std::int32_t> v = {7, -7, 6, -1};
  finalize(v.data(), v.size(), DataType::kInt32, ReduceOp::kAvg, 2);
  EXPECT_EQ(v, (std::vector<std::int32_t>{3, -3, 3, 0}));
  std::vector<std::int8_t> w = {-128, 127};
  finalize(w.data(), w.size(), DataType::kInt8, ReduceOp::kAvg, 200);  // nranks > INT8_MAX
  EXPECT_EQ(w, (std::vector<std::int8_t>{0, 0}));
  std::vector<std::uint64_t> u = {~0ull};
  finalize(u.data(), 1, DataType::kUint64, ReduceOp::kAvg, 3);
  EXPECT_EQ(u[0], ~0ull / 3);
}

TEST(Finalize, AvgDividesFloatsAndLeavesOtherOps) {
  std::vector<float> f = {3.0f, -1.0f};
  finalize(f.data(), 2, DataType::kFloat32, ReduceOp::kAvg, 4);
  EXPECT_EQ(f, (std::vector<float>{0.75f, -0.25f}));
  std::vector<std::uint16_t> h = {float_to_half(3.0f)};
  finalize(h.data(), 1, DataType::kFloat16, ReduceOp::kAvg, 2);
  EXPECT_EQ(half_to_float(h[0]), 1.5f);
  std::vector<std::int32_t> s = {9};
  finalize(s.data(), 1, DataType::kInt32, ReduceOp::kSum, 2);
  finalize(s.data(), 1, DataType::kInt32, ReduceOp::kMax, 2);
  EXPECT_EQ(s[0], 9);
}

}  // namespace
}  // namespace chorus::kernels
