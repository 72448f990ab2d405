// OpStats: size classes, counting, quantiles, the store encoding and the tables.
#include "diag/op_stats.h"

#include <gtest/gtest.h>

#include <sstream>
#include <vector>

namespace chorus::diag {
namespace {

OpEvent ev(const char* name, std::size_t bytes, std::int64_t ns, bool ok = true) {
  OpEvent e;
  e.name = name;
  e.bytes = bytes;
  e.algo = "ring";
  e.start_ns = 1000;
  e.end_ns = 1000 + ns;
  e.ok = ok;
  return e;
}

TEST(OpStats, SizeClasses) {
  EXPECT_EQ(size_class(0), 0u);
  EXPECT_EQ(size_class(1), 1u);
  EXPECT_EQ(size_class(4000), 2048u);
  EXPECT_EQ(size_class(4096), 4096u);
  EXPECT_EQ(size_text(1 << 20), "1M");
  EXPECT_EQ(size_text(3000), "3000");
}

TEST(OpStats, CountsTimesAndQuantiles) {
  OpStats s(4);
  for (int i = 1; i <= 100; ++i) s.add(ev("all_reduce", 1 << 20, i * 1000));  // 1..100 us
  s.add(ev("all_reduce", 1 << 20, 5000000, /*ok=*/false));  // failed: not counted
  s.add(ev("broadcast", 100, 2000));
  const auto rows = s.rows();
  ASSERT_EQ(rows.size(), 2u);
  const OpStatsRow& ar = rows[0];
  EXPECT_EQ(ar.op, "all_reduce");
  EXPECT_EQ(ar.count, 100u);
  EXPECT_EQ(ar.bytes, 100u << 20);
  EXPECT_NEAR(ar.mean_us, 50.5, 1e-9);
  EXPECT_NEAR(ar.p50_us, 50.0, 50.0 * 0.03);
  EXPECT_NEAR(ar.p99_us, 99.0, 99.0 * 0.03);
  EXPECT_NEAR(ar.max_us, 100.0, 1e-9);
  // 1 MiB / 50.5 us x 2*3/4.
  EXPECT_NEAR(ar.busbw_gbps, (1 << 20) / (50.5 * 1e3) * 1.5, 1e-6);
  EXPECT_EQ(ar.algo, "ring");
  EXPECT_EQ(rows[1].op, "broadcast");
  EXPECT_EQ(rows[1].size_class, 64u);
}

TEST(OpStats, EncodingRoundTripsAndTableNamesTheFastestRankAsLast) {
  OpStats a(2), b(2);
  for (int i = 0; i < 10; ++i) {
    a.add(ev("all_reduce", 4096, 300000));  // rank 0 waits 300 us per op
    b.add(ev("all_reduce", 4096, 100000));  // rank 1 arrives last: 100 us
  }
  const auto back = decode_stats(encode_stats(a.rows()));
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].count, 10u);
  EXPECT_NEAR(back[0].mean_us, 300.0, 1e-3);
  const std::string t = format_stats_table("comm0", 2, {back, b.rows()});
  EXPECT_NE(t.find("chorus stats v1 (comm0, 2 ranks, 2 reported)"), std::string::npos) << t;
  const auto at = t.find("  all_reduce");
  ASSERT_NE(at, std::string::npos) << t;
  std::istringstream row(t.substr(at, t.find('\n', at) - at));
  std::vector<std::string> f;
  for (std::string w; row >> w;) f.push_back(w);
  ASSERT_EQ(f.size(), 11u) << t;
  EXPECT_EQ(f[9], "1") << t;       // the rank with the smallest mean arrived last
  EXPECT_EQ(f[10], "200.0") << t;  // skew: 300 - 100 us
}

}  // namespace
}  // namespace chorus::diag
