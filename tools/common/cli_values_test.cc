#include "cli_values.h"

#include <gtest/gtest.h>

namespace chorus_tools {
namespace {

TEST(ParseBytes, AcceptsSuffixes) {
  std::size_t b = 0;
  ASSERT_TRUE(parse_bytes("8", &b));
  EXPECT_EQ(b, 8u);
  ASSERT_TRUE(parse_bytes("64K", &b));
  EXPECT_EQ(b, 64u << 10);
  ASSERT_TRUE(parse_bytes("16MiB", &b));
  EXPECT_EQ(b, 16u << 20);
  ASSERT_TRUE(parse_bytes("1gb", &b));
  EXPECT_EQ(b, 1u << 30);
}

TEST(ParseBytes, RejectsGarbage) {
  std::size_t b = 0;
  for (const char* bad : {"", "-1", "K", "12Q", "1.5M", "99999999999999999999G", "+4"})
    EXPECT_FALSE(parse_bytes(bad, &b)) << bad;
}

TEST(ParseDuration, AcceptsUnits) {
  std::chrono::milliseconds d{0};
  ASSERT_TRUE(parse_duration("250ms", &d));
  EXPECT_EQ(d.count(), 250);
  ASSERT_TRUE(parse_duration("30s", &d));
  EXPECT_EQ(d.count(), 30000);
  ASSERT_TRUE(parse_duration("90", &d));
  EXPECT_EQ(d.count(), 90000);
  ASSERT_TRUE(parse_duration("5m", &d));
  EXPECT_EQ(d.count(), 300000);
  ASSERT_TRUE(parse_duration("24h", &d));
  EXPECT_EQ(d.count(), 24LL * 3600 * 1000);
}

TEST(ParseDuration, RejectsGarbage) {
  std::chrono::milliseconds d{0};
  for (const char* bad : {"", "-5s", "s", "3d", "1.5h", "10 s", "99999999999999999999h"})
    EXPECT_FALSE(parse_duration(bad, &d)) << bad;
}

}  // namespace
}  // namespace chorus_tools
