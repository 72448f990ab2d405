// Hang report: line encoding round trip, rank ranges and the grouped table.
#include "diag/hang_report.h"

#include <gtest/gtest.h>

namespace chorus::diag {
namespace {

RankLine failed_in(int rank, std::int64_t seq, const char* op) {
  RankLine l;
  l.rank = rank;
  l.reported = true;
  l.host = "vm";
  l.pid = 100 + rank;
  l.done_seq = seq - 1;
  l.done_op = "all_reduce";
  l.cur_seq = seq;
  l.cur_op = op;
  l.state = "failed";
  l.detail = "peer_lost";
  return l;
}

TEST(HangReportTest, LineRoundTrips) {
  RankLine l = failed_in(3, 1235, "all_gather");
  l.detail = "with\ttab";
  auto back = decode_rank_line(encode_rank_line(l));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->rank, 3);
  EXPECT_EQ(back->host, "vm");
  EXPECT_EQ(back->pid, 103);
  EXPECT_EQ(back->done_seq, 1234);
  EXPECT_EQ(back->cur_op, "all_gather");
  EXPECT_EQ(back->detail, "with tab");
  EXPECT_FALSE(decode_rank_line("garbage").has_value());
  EXPECT_FALSE(decode_rank_line("chorus-hang v2\t1\t2\t3\t4\t5\t6\t7\t8\t9").has_value());
}

TEST(HangReportTest, RankRanges) {
  EXPECT_EQ(rank_ranges({}), "");
  EXPECT_EQ(rank_ranges({4}), "4");
  EXPECT_EQ(rank_ranges({0, 1, 2, 3, 5, 6, 7}), "0-3,5-7");
  EXPECT_EQ(rank_ranges({0, 2, 4, 5}), "0,2,4-5");
}

TEST(HangReportTest, GroupsRanksAndPutsTheCulpritFirst) {
  std::vector<RankLine> lines;
  for (int r = 0; r < 8; ++r) lines.push_back(failed_in(r, 1235, "all_gather"));
  lines[4] = RankLine{};
  lines[4].rank = 4;
  lines[4].host = "vm";
  lines[4].pid = 104;
  const std::string t = format_hang_report(0, 0, lines);
  EXPECT_EQ(t.rfind("chorus hang report v1 (comm 0, 8 ranks, printed by rank 0):\n", 0), 0u) << t;
  const auto culprit = t.find("  rank 4 (host vm pid 104): no report (exited or stalled?)\n");
  const auto rest = t.find("  ranks 0-3,5-7: failed (peer_lost) in seq 1235 all_gather\n");
  EXPECT_NE(culprit, std::string::npos) << t;
  EXPECT_NE(rest, std::string::npos) << t;
  EXPECT_LT(culprit, rest);
  EXPECT_NE(t.find("chorus hang report end (comm 0)\n"), std::string::npos);
}

TEST(HangReportTest, ExitedRankNamesItsLastCompletedOperation) {
  std::vector<RankLine> lines{failed_in(0, 10, "all_reduce"), failed_in(1, 10, "all_reduce")};
  lines[1].state = "exited";
  lines[1].detail.clear();
  lines[1].done_seq = 9;
  lines[1].done_op = "all_gather";
  lines[1].cur_seq = -1;
  const std::string t = format_hang_report(2, 0, lines);
  EXPECT_NE(t.find("  rank 1 (host vm pid 101): exited (communicator destroyed) after "
                   "completing seq 9 all_gather\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("  rank 0 (host vm pid 100): failed (peer_lost) in seq 10 all_reduce\n"),
            std::string::npos)
      << t;
}

}  // namespace
}  // namespace chorus::diag
