// Tests for fp16/bf16 conversions: exhaustive round trips and rounding edge cases.
#include "kernels/half.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace chorus::kernels {
namespace {

bool half_is_nan(std::uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0; }
bool bf16_is_nan(std::uint16_t b) { return (b & 0x7f80u) == 0x7f80u && (b & 0x7fu) != 0; }

TEST(Half, RoundTripEveryValue) {
  for (std::uint32_t i = 0; i < 65536; ++i) {
    const auto h = static_cast<std::uint16_t>(i);
    const float f = half_to_float(h);
    if (half_is_nan(h)) {
      EXPECT_TRUE(std::isnan(f)) << i;
      EXPECT_TRUE(half_is_nan(float_to_half(f))) << i;
    } else {
      EXPECT_EQ(float_to_half(f), h) << i;
    }
  }
}

TEST(Half, KnownValues) {
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half(65520.0f), 0x7c00);  // halfway to 2^16 rounds to even = inf
  EXPECT_EQ(float_to_half(65519.0f), 0x7bff);
  EXPECT_EQ(float_to_half(1e10f), 0x7c00);
  EXPECT_EQ(float_to_half(-std::numeric_limits<float>::infinity()), 0xfc00);
  EXPECT_EQ(float_to_half(-0.0f), 0x8000);
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -25)), 0x0000);  // tie rounds to even (0)
  EXPECT_EQ(float_to_half(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(float_to_half(std::ldexp(3.0f, -25)), 0x0002);  // 1.5 ulp: tie to even 2
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1).
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  EXPECT_EQ(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_TRUE(half_is_nan(float_to_half(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_FLOAT_EQ(half_to_float(0x3555), 0.333251953125f);
}

#ifdef __FLT16_MAX__
// Against the compiler's own _Float16 conversion (round to nearest even) on a sweep of floats.
TEST(Half, MatchesCompilerFloat16) {
  for (std::uint64_t i = 0; i < (1ull << 32); i += 4099) {
    const float f = std::bit_cast<float>(static_cast<std::uint32_t>(i));
    const auto ref = std::bit_cast<std::uint16_t>(static_cast<_Float16>(f));
    if (std::isnan(f)) continue;
    ASSERT_EQ(float_to_half(f), ref) << std::hex << i;
  }
}
#endif

TEST(Bf16, RoundTripEveryValue) {
  for (std::uint32_t i = 0; i < 65536; ++i) {
    const auto b = static_cast<std::uint16_t>(i);
    const float f = bf16_to_float(b);
    if (bf16_is_nan(b)) {
      EXPECT_TRUE(std::isnan(f)) << i;
      EXPECT_TRUE(bf16_is_nan(float_to_bf16(f))) << i;
    } else {
      EXPECT_EQ(float_to_bf16(f), b) << i;
    }
  }
}

TEST(Bf16, RoundsToNearestEven) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0x3f808000u)), 0x3f80);  // tie, even below
  EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0x3f818000u)), 0x3f82);  // tie, even above
  EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0x3f808001u)), 0x3f81);
  EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0x7f7fffffu)), 0x7f80);  // overflow -> inf
  EXPECT_TRUE(bf16_is_nan(float_to_bf16(std::bit_cast<float>(0x7f800001u))));
}

}  // namespace
}  // namespace chorus::kernels
