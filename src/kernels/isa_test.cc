// Tests for the kernel-level API (names, parsing, set_isa, kernel_isa) and for the NaN / signed
// zero rules every level shares.
#include "kernels/isa.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/half.h"
#include "kernels/reduce.h"

namespace chorus::kernels {
namespace {

TEST(Isa, NamesRoundTrip) {
  for (int l = 0; l < kNumIsas; ++l) {
    const auto isa = static_cast<Isa>(l);
    EXPECT_EQ(parse_isa(isa_name(isa)), isa);
  }
  EXPECT_STREQ(isa_name(Isa::kAvx512), "avx512");
  EXPECT_STREQ(isa_name(static_cast<Isa>(9)), "invalid");
  EXPECT_EQ(parse_isa("auto"), best_isa());
  EXPECT_EQ(parse_isa("AVX2"), std::nullopt);
  EXPECT_EQ(parse_isa("neon"), std::nullopt);
  EXPECT_EQ(parse_isa(""), std::nullopt);
}

TEST(Isa, ScalarAlwaysSupportedAndLevelsNest) {
  EXPECT_TRUE(cpu_supports(Isa::kScalar));
  EXPECT_TRUE(cpu_supports(best_isa()));
  for (int l = 1; l < kNumIsas; ++l) {
    if (cpu_supports(static_cast<Isa>(l))) {
      EXPECT_TRUE(cpu_supports(static_cast<Isa>(l - 1)));
    }
  }
}

TEST(Isa, SetIsaClampsToCpuAndDrivesReduce) {
  const Isa before = active_isa();
  EXPECT_EQ(set_isa(Isa::kScalar), Isa::kScalar);
  EXPECT_EQ(active_isa(), Isa::kScalar);
  EXPECT_STREQ(isa_name(), "scalar");
  std::vector<float> a = {1, 2}, b = {3, 4}, out(2);
  reduce(out.data(), a.data(), b.data(), 2, DataType::kFloat32, ReduceOp::kSum);
  EXPECT_EQ(out, (std::vector<float>{4, 6}));
  EXPECT_EQ(set_isa(Isa::kAvx512), best_isa());  // lowered when the CPU lacks AVX-512
  set_isa(before);
}

TEST(Isa, KernelIsaCoversEveryPair) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "SIMD levels exist on x86-64 only";
#endif
  for (int d = 0; d < kNumDataTypes; ++d) {
    for (int o = 0; o < kNumReduceOps; ++o) {
      const auto dt = static_cast<DataType>(d);
      const auto op = static_cast<ReduceOp>(o);
      EXPECT_EQ(kernel_isa(Isa::kScalar, dt, op), Isa::kScalar);
      EXPECT_EQ(kernel_isa(Isa::kAvx512, dt, op), Isa::kAvx512);
      EXPECT_EQ(kernel_isa(Isa::kAvx2, dt, op), Isa::kAvx2);
      EXPECT_EQ(kernel_isa(Isa::kSse, dt, op), dt == DataType::kFloat16 ? Isa::kScalar : Isa::kSse);
    }
  }
}

TEST(Isa, ReduceWithRefusesMissingLevel) {
  float a = 1, b = 2, out = 0;
  for (int l = 0; l < kNumIsas; ++l) {
    const auto isa = static_cast<Isa>(l);
    EXPECT_EQ(reduce_with(isa, &out, &a, &b, 1, DataType::kFloat32, ReduceOp::kSum),
              cpu_supports(isa));
  }
}

std::uint32_t bits(float f) { return std::bit_cast<std::uint32_t>(f); }

// The shared rules, checked at every level this CPU has.
TEST(Semantics, MinMaxReturnAOnNanAndEqual) {
  const float nan = std::bit_cast<float>(0x7fa00001u);
  std::vector<float> a = {nan, 1.0f, -0.0f, 0.0f}, b = {1.0f, nan, 0.0f, -0.0f};
  for (int l = 0; l < kNumIsas; ++l) {
    for (ReduceOp op : {ReduceOp::kMin, ReduceOp::kMax}) {
      std::vector<float> out(4);
      if (!reduce_with(static_cast<Isa>(l), out.data(), a.data(), b.data(), 4,
                       DataType::kFloat32, op)) continue;
      for (int i = 0; i < 4; ++i) EXPECT_EQ(bits(out[i]), bits(a[i])) << l << " " << i;
    }
  }
}

TEST(Semantics, FloatSumProdNanIsCanonical) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> a = {std::bit_cast<float>(0xffa00001u), inf, 0.0f},
                     b = {std::bit_cast<float>(0x7fc00abcu), -inf, inf};
  for (int l = 0; l < kNumIsas; ++l) {
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kProd}) {
      std::vector<float> out(3);
      if (!reduce_with(static_cast<Isa>(l), out.data(), a.data(), b.data(), 3,
                       DataType::kFloat32, op)) continue;
      EXPECT_EQ(bits(out[0]), 0x7fc00000u);
      const int invalid = op == ReduceOp::kSum ? 1 : 2;  // inf - inf, 0 * inf
      EXPECT_EQ(bits(out[invalid]), 0x7fc00000u);
    }
  }
  std::vector<std::uint16_t> h = {0xfe12}, g = {0x3c00};
  std::vector<std::uint16_t> ho(1), bo(1);
  reduce(ho.data(), h.data(), g.data(), 1, DataType::kFloat16, ReduceOp::kSum);
  EXPECT_EQ(ho[0], 0x7e00);
  std::vector<std::uint16_t> bh = {0xffc5}, bg = {0x3f80};
  reduce(bo.data(), bh.data(), bg.data(), 1, DataType::kBfloat16, ReduceOp::kProd);
  EXPECT_EQ(bo[0], 0x7fc0);
}

TEST(Semantics, FinalizeAvgNanIsCanonical) {
  std::vector<float> f = {std::bit_cast<float>(0xffc01234u), 3.0f};
  finalize(f.data(), 2, DataType::kFloat32, ReduceOp::kAvg, 2);
  EXPECT_EQ(bits(f[0]), 0x7fc00000u);
  EXPECT_EQ(f[1], 1.5f);
  std::vector<std::uint16_t> h = {0xfe01, float_to_half(5.0f)};
  finalize(h.data(), 2, DataType::kFloat16, ReduceOp::kAvg, 4);
  EXPECT_EQ(h[0], 0x7e00);
  EXPECT_EQ(half_to_float(h[1]), 1.25f);
}

}  // namespace
}  // namespace chorus::kernels
