// fp32 <-> fp16 / bf16 buffer conversions: the scalar reference against known values and
// every 16-bit pattern, then every kernel level bit for bit against it (random and special
// values, halfway cases, every tail length 0..70 at several alignments), and dispatch.
#include "kernels/convert.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/half.h"

namespace chorus::kernels {
namespace {

constexpr DataType kHalves[] = {DataType::kFloat16, DataType::kBfloat16};

std::uint32_t bits(float f) { return std::bit_cast<std::uint32_t>(f); }
float from_bits(std::uint32_t u) { return std::bit_cast<float>(u); }

const char* name(DataType t) { return t == DataType::kFloat16 ? "float16" : "bfloat16"; }

bool is_nan16(DataType t, std::uint16_t h) {
  return t == DataType::kFloat16 ? (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0
                                 : (h & 0x7f80u) == 0x7f80u && (h & 0x7fu) != 0;
}

std::uint16_t narrow_one(DataType t, float f) {
  std::uint16_t h = 0;
  EXPECT_TRUE(narrow_f32_with(Isa::kScalar, t, &f, &h, 1));
  return h;
}

std::vector<Isa> levels() {
  std::vector<Isa> out;
  for (int l = 0; l < kNumIsas; ++l)
    if (cpu_supports(static_cast<Isa>(l))) out.push_back(static_cast<Isa>(l));
  return out;
}

// fp32 inputs worth hitting: specials, values near every fp16/bf16 boundary, exact
// halfway cases (and one ulp either side), random bit patterns and moderate values.
std::vector<float> interesting_floats(std::size_t random_count, std::uint64_t seed) {
  std::vector<std::uint32_t> u = {
      0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007fffff, 0x807fffff, 0x00800000,
      0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7f800001,
      0xff800001, 0x7fa5a5a5, 0x7fffffff, 0xffffffff, 0x3f800000, 0xbf800000, 0x477fe000,
      0x477fefff, 0x477ff000, 0x477ff001, 0x47800000, 0x38800000, 0x387fffff, 0x33800000,
      0x33000000, 0x33000001, 0x32ffffff, 0x337fffff, 0x3f808000, 0x3f818000, 0x3f808001,
      0x7f7f8000, 0x7f7f7fff, 0x00008000, 0x00018000};
  std::mt19937_64 rng(seed);
  for (std::uint32_t h = 0; h < 65536; h += 7) {
    // Halfway between two fp16 values (normal range) and between two bf16 values.
    const std::uint32_t f16 = bits(half_to_float(static_cast<std::uint16_t>(h)));
    if ((h & 0x7c00u) != 0 && (h & 0x7c00u) != 0x7c00u) {
      u.push_back(f16 + 0x1000u);
      u.push_back(f16 + 0x0fffu);
      u.push_back(f16 + 0x1001u);
    }
    u.push_back((h << 16) | 0x8000u);
    u.push_back((h << 16) | 0x7fffu);
  }
  for (std::size_t i = 0; i < random_count; ++i) {
    u.push_back(static_cast<std::uint32_t>(rng()));
    u.push_back(bits(static_cast<float>(static_cast<int>(rng() % 200001) - 100000) / 64.0f));
  }
  std::vector<float> f(u.size());
  for (std::size_t i = 0; i < u.size(); ++i) f[i] = from_bits(u[i]);
  return f;
}

TEST(Convert, ScalarKnownValues) {
  constexpr DataType h = DataType::kFloat16, b = DataType::kBfloat16;
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(narrow_one(h, 0.0f), 0x0000);
  EXPECT_EQ(narrow_one(h, -0.0f), 0x8000);
  EXPECT_EQ(narrow_one(h, 1.0f), 0x3c00);
  EXPECT_EQ(narrow_one(h, 65504.0f), 0x7bff);         // max normal
  EXPECT_EQ(narrow_one(h, 65519.996f), 0x7bff);       // below the halfway point
  EXPECT_EQ(narrow_one(h, 65520.0f), 0x7c00);         // halfway to 2^16: even = inf
  EXPECT_EQ(narrow_one(h, from_bits(0x7f7fffff)), 0x7c00);  // fp32 max -> inf
  EXPECT_EQ(narrow_one(h, -inf), 0xfc00);
  EXPECT_EQ(narrow_one(h, std::ldexp(1.0f, -14)), 0x0400);  // min normal
  EXPECT_EQ(narrow_one(h, std::ldexp(1.0f, -24)), 0x0001);  // min subnormal
  EXPECT_EQ(narrow_one(h, std::ldexp(1.0f, -25)), 0x0000);  // tie -> even 0
  EXPECT_EQ(narrow_one(h, std::ldexp(3.0f, -25)), 0x0002);  // tie -> even 2
  EXPECT_EQ(narrow_one(h, from_bits(0x00000001)), 0x0000);  // fp32 subnormal -> 0
  EXPECT_EQ(narrow_one(h, from_bits(0x80000001)), 0x8000);
  EXPECT_EQ(narrow_one(h, 1.0f + std::ldexp(1.0f, -11)), 0x3c00);      // tie -> even
  EXPECT_EQ(narrow_one(h, 1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // tie -> even
  EXPECT_EQ(narrow_one(h, from_bits(0x7f800001)), 0x7e00);  // sNaN -> quiet NaN
  EXPECT_EQ(narrow_one(h, from_bits(0xffc00000)), 0xfe00);
  EXPECT_EQ(narrow_one(h, from_bits(0x7fa5a5a5)), 0x7f2d);  // payload top bits kept
  EXPECT_EQ(narrow_one(b, -0.0f), 0x8000);
  EXPECT_EQ(narrow_one(b, 1.0f), 0x3f80);
  EXPECT_EQ(narrow_one(b, from_bits(0x3f808000)), 0x3f80);  // tie -> even below
  EXPECT_EQ(narrow_one(b, from_bits(0x3f818000)), 0x3f82);  // tie -> even above
  EXPECT_EQ(narrow_one(b, from_bits(0x7f7fffff)), 0x7f80);  // overflow -> inf
  EXPECT_EQ(narrow_one(b, from_bits(0x7f7f7fff)), 0x7f7f);  // max bf16
  EXPECT_EQ(narrow_one(b, from_bits(0x00000001)), 0x0000);  // subnormals round too
  EXPECT_EQ(narrow_one(b, from_bits(0x00018000)), 0x0002);
  EXPECT_EQ(narrow_one(b, from_bits(0x7f800001)), 0x7fc0);  // sNaN -> quiet NaN
  EXPECT_EQ(narrow_one(b, from_bits(0xffa5a5a5)), 0xffe5);
}

// Every fp16 / bf16 pattern widens exactly (NaN: quiet bit set for fp16) and narrows back
// to itself (NaN: itself with the quiet bit), at every level.
TEST(Convert, EveryPatternWidensExactlyAndRoundTrips) {
  std::vector<std::uint16_t> all(65536), back(65536);
  for (std::uint32_t i = 0; i < 65536; ++i) all[i] = static_cast<std::uint16_t>(i);
  std::vector<float> wide(65536);
  for (Isa isa : levels()) {
    for (DataType t : kHalves) {
      SCOPED_TRACE(std::string(isa_name(isa)) + " " + name(t));
      ASSERT_TRUE(widen_to_f32_with(isa, t, all.data(), wide.data(), all.size()));
      ASSERT_TRUE(narrow_f32_with(isa, t, wide.data(), back.data(), wide.size()));
      for (std::uint32_t i = 0; i < 65536; ++i) {
        const auto h = static_cast<std::uint16_t>(i);
        const bool nan = is_nan16(t, h);
        std::uint32_t want;
        if (t == DataType::kBfloat16) {
          want = i << 16;
        } else {
          want = bits(half_to_float(h)) | (nan ? 0x00400000u : 0u);
        }
        ASSERT_EQ(bits(wide[i]), want) << std::hex << i;
        const std::uint16_t quiet = t == DataType::kFloat16 ? 0x0200 : 0x0040;
        ASSERT_EQ(back[i], nan ? (h | quiet) : h) << std::hex << i;
      }
    }
  }
}

TEST(Convert, ScalarMatchesHalfHelpers) {
  const auto in = interesting_floats(20000, 1);
  std::vector<std::uint16_t> out(in.size());
  for (DataType t : kHalves) {
    ASSERT_TRUE(narrow_f32_with(Isa::kScalar, t, in.data(), out.data(), in.size()));
    for (std::size_t i = 0; i < in.size(); ++i)
      ASSERT_EQ(out[i], t == DataType::kFloat16 ? float_to_half(in[i]) : float_to_bf16(in[i]))
          << std::hex << bits(in[i]);
  }
}

#ifdef __FLT16_MAX__
// The reference against the compiler's own _Float16 rounding over a sweep of fp32 values.
TEST(Convert, ScalarFp16MatchesCompilerFloat16) {
  std::vector<float> in;
  for (std::uint64_t i = 0; i < (1ull << 32); i += 65537)
    in.push_back(from_bits(static_cast<std::uint32_t>(i)));
  std::vector<std::uint16_t> out(in.size());
  narrow_f32_with(Isa::kScalar, DataType::kFloat16, in.data(), out.data(), in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (std::isnan(in[i])) continue;
    ASSERT_EQ(out[i], std::bit_cast<std::uint16_t>(static_cast<_Float16>(in[i])))
        << std::hex << bits(in[i]);
  }
}
#endif

// Every level against scalar on the interesting values, then on every length 0..70 at
// offsets 0..3 (unaligned starts), checking nothing past the end is written.
TEST(Convert, EveryLevelMatchesScalarBitForBit) {
  const auto in = interesting_floats(50000, 2);
  std::vector<std::uint16_t> want(in.size()), got(in.size());
  std::vector<float> wide_want(in.size()), wide_got(in.size());
  for (DataType t : kHalves) {
    narrow_f32_with(Isa::kScalar, t, in.data(), want.data(), in.size());
    widen_to_f32_with(Isa::kScalar, t, want.data(), wide_want.data(), want.size());
    for (Isa isa : levels()) {
      SCOPED_TRACE(std::string(isa_name(isa)) + " " + name(t));
      ASSERT_TRUE(narrow_f32_with(isa, t, in.data(), got.data(), in.size()));
      for (std::size_t i = 0; i < in.size(); ++i)
        ASSERT_EQ(got[i], want[i]) << "input " << std::hex << bits(in[i]);
      ASSERT_TRUE(widen_to_f32_with(isa, t, want.data(), wide_got.data(), want.size()));
      for (std::size_t i = 0; i < in.size(); ++i)
        ASSERT_EQ(bits(wide_got[i]), bits(wide_want[i])) << "input " << std::hex << want[i];
    }
  }
}

TEST(Convert, TailsOfEveryLength) {
  const auto in = interesting_floats(100, 3);
  constexpr std::uint16_t kGuard = 0xa5a5;
  for (DataType t : kHalves) {
    for (Isa isa : levels()) {
      for (std::size_t off = 0; off < 4; ++off) {
        for (std::size_t n = 0; n <= 70; ++n) {
          SCOPED_TRACE(std::string(isa_name(isa)) + " " + name(t) + " n=" +
                       std::to_string(n) + " offset=" + std::to_string(off));
          const float* src = in.data() + 1000 + 37 * n + off;
          std::vector<std::uint16_t> want(n + 8, kGuard), got(n + 8, kGuard);
          narrow_f32_with(Isa::kScalar, t, src, want.data() + off, n);
          ASSERT_TRUE(narrow_f32_with(isa, t, src, got.data() + off, n));
          ASSERT_EQ(got, want);
          std::vector<float> wide_want(n + 8, -7.0f), wide_got(n + 8, -7.0f);
          widen_to_f32_with(Isa::kScalar, t, want.data() + off, wide_want.data() + off, n);
          ASSERT_TRUE(widen_to_f32_with(isa, t, want.data() + off, wide_got.data() + off, n));
          for (std::size_t i = 0; i < n + 8; ++i)
            ASSERT_EQ(bits(wide_got[i]), bits(wide_want[i])) << i;
        }
      }
    }
  }
}

TEST(Convert, LevelsAndDispatch) {
  EXPECT_EQ(convert_isa(Isa::kScalar, DataType::kFloat16), Isa::kScalar);
  EXPECT_EQ(convert_isa(Isa::kSse, DataType::kFloat16), Isa::kScalar);  // no F16C
  EXPECT_EQ(convert_isa(Isa::kSse, DataType::kBfloat16), Isa::kSse);
#if defined(__x86_64__)
  EXPECT_EQ(convert_isa(Isa::kAvx2, DataType::kFloat16), Isa::kAvx2);
  EXPECT_EQ(convert_isa(Isa::kAvx512, DataType::kBfloat16), Isa::kAvx512);
#endif
  const float f = 1.0f;
  std::uint16_t h = 0;
  float w = 0;
  for (int l = 0; l < kNumIsas; ++l) {
    const Isa isa = static_cast<Isa>(l);
    EXPECT_EQ(narrow_f32_with(isa, DataType::kFloat16, &f, &h, 1), cpu_supports(isa));
    EXPECT_EQ(widen_to_f32_with(isa, DataType::kFloat16, &h, &w, 1), cpu_supports(isa));
  }
  // The plain calls run the active level: same bits as the scalar reference, at each level.
  const auto in = interesting_floats(1000, 4);
  std::vector<std::uint16_t> want(in.size()), got(in.size());
  const Isa before = active_isa();
  for (Isa isa : levels()) {
    ASSERT_EQ(set_isa(isa), isa);
    for (DataType t : kHalves) {
      narrow_f32_with(Isa::kScalar, t, in.data(), want.data(), in.size());
      narrow_f32(t, in.data(), got.data(), in.size());
      EXPECT_EQ(got, want) << isa_name(isa);
      std::vector<float> wide(in.size());
      widen_to_f32(t, want.data(), wide.data(), want.size());
      std::vector<std::uint16_t> back(in.size());
      narrow_f32_with(Isa::kScalar, t, wide.data(), back.data(), wide.size());
      EXPECT_EQ(back, want) << isa_name(isa);
    }
  }
  set_isa(before);
}

}  // namespace
}  // namespace chorus::kernels
