// Tests of the string helpers and Status/Result.
#include "util/strings.h"

#include <gtest/gtest.h>

#include "util/status.h"

namespace chorus {
namespace {

TEST(StringsTest, ParseSizeAcceptsSuffixes) {
  EXPECT_EQ(parse_size("8"), 8u);
  EXPECT_EQ(parse_size("64K"), 64u << 10);
  EXPECT_EQ(parse_size("16m"), 16u << 20);
  EXPECT_EQ(parse_size("1G"), 1ull << 30);
  EXPECT_EQ(parse_size("2MiB"), 2u << 20);
  EXPECT_FALSE(parse_size(""));
  EXPECT_FALSE(parse_size("K"));
  EXPECT_FALSE(parse_size("12Q"));
  EXPECT_FALSE(parse_size("99999999999999999999"));
  EXPECT_FALSE(parse_size("17179869184G"));
}

TEST(StringsTest, ParseIntHandlesSignsAndOverflow) {
  EXPECT_EQ(parse_int("-3"), -3);
  EXPECT_EQ(parse_int(" 42 "), 42);
  EXPECT_FALSE(parse_int("4x"));
  EXPECT_FALSE(parse_int("9223372036854775808"));
  EXPECT_EQ(parse_int("-9223372036854775808"), INT64_MIN);
}

TEST(StringsTest, SplitKeepsEmptyFields) {
  auto v = str_split("a,,b", ',');
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[1], "");
}

TEST(StatusTest, OkIsCheapAndContextPrepends) {
  Status ok;
  EXPECT_TRUE(ok.is_ok());
  EXPECT_EQ(ok.to_string(), "ok");
  Status s = Status(ErrorCode::kPeerLost, "gone", 3).with_context("all_reduce seq 7").with_seq(7);
  EXPECT_EQ(s.code(), ErrorCode::kPeerLost);
  EXPECT_EQ(s.message(), "all_reduce seq 7: gone");
  EXPECT_EQ(s.peer(), 3);
  EXPECT_EQ(s.seq(), 7);
}

Result<int> half(int x) {
  if (x % 2) return invalid_argument("x is odd");
  return x / 2;
}
Status use_half(int x, int* out) {
  CHORUS_ASSIGN_OR_RETURN(*out, half(x));
  return Status();
}

TEST(StatusTest, AssignOrReturnPropagates) {
  int out = 0;
  EXPECT_TRUE(use_half(4, &out).is_ok());
  EXPECT_EQ(out, 2);
  EXPECT_EQ(use_half(3, &out).code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace chorus
