// chorus-trace on synthetic timelines: matching, phases, skew, stragglers, overlap, a
// file cut short by a crash, and the levels of hierarchical algorithms.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "merge.h"
#include "report.h"
#include "trace.h"

namespace chorus_trace {
namespace {

std::string span(int rank, int tid, const char* name, int seq, double ts, double dur,
                 double queued, const char* stream) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                ",\n{\"ph\":\"X\",\"cat\":\"chorus\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,"
                "\"dur\":%.3f,\"args\":{\"comm\":0,\"rank\":%d,\"size\":3,\"seq\":%d,\"dtype\":\"float32\","
                "\"bytes\":1048576,\"algo\":\"ring\",\"root\":-1,\"peer\":-1,\"stream\":\"%s\","
                "\"queued_us\":%.3f,\"ok\":true}}",
                name, rank, tid, ts, dur, rank, seq, stream, queued);
  return buf;
}

// Three ranks, ten all_reduces on stream "dp" and ten all_gathers on "tp" at the same
// times; rank 2 arrives 500 us late at every one.
std::string write_rank(int rank, bool cut) {
  const std::string path =
      std::string(CHORUS_TRACE_TEST_DIR) + "/synthetic." + std::to_string(rank) + ".json";
  std::ofstream out(path);
  out << "{\"otherData\":{\"chorus_timeline\":1,\"rank\":" << rank
      << ",\"size\":3,\"clock\":{\"offset_us\":1.0,\"error_us\":2.0,\"method\":\"store round trip\"}},"
         "\"traceEvents\":[\n{\"ph\":\"M\",\"name\":\"chorus_comm\",\"pid\":"
      << rank << ",\"args\":{\"comm\":0,\"key\":\"comm0\",\"rank\":" << rank << ",\"size\":3}}";
  for (int i = 0; i < 10; ++i) {
    const double t0 = 10000.0 * i, late = rank == 2 ? 500 : rank * 10;
    // Everyone finishes together at t0 + 1000; the late rank's span is shorter.
    out << span(rank, 1, "all_reduce", 2 * i, t0 + late, 1000 - late, 0, "dp");
    out << span(rank, 2, "all_gather", 2 * i + 1, t0 + late, 1000 - late, 0, "tp");
  }
  if (!cut) out << "\n]}\n";
  return path;
}

TEST(ChorusTrace, ReportNamesTheLateRank) {
  std::vector<RankFile> files;
  for (int r = 0; r < 3; ++r)
    for (auto& f : load(write_rank(r, /*cut=*/r == 1))) files.push_back(std::move(f));
  ASSERT_EQ(files.size(), 3u);
  const auto r = report(files);
  EXPECT_EQ(r["operations_matched"], 20);
  EXPECT_EQ(r["straggler"], 2);
  EXPECT_EQ(r["stragglers"][0]["times_last"], 20);
  EXPECT_NEAR(r["stragglers"][0]["mean_late_us"].get<double>(), 490.0, 1e-6);
  ASSERT_EQ(r["ops"].size(), 2u);
  const auto& ar = r["ops"][0];
  EXPECT_EQ(ar["op"], "all_gather");
  EXPECT_EQ(ar["count"], 10);
  EXPECT_NEAR(ar["skew_mean_us"].get<double>(), 500.0, 1e-6);
  EXPECT_NEAR(ar["time_p50_us"].get<double>(), 500.0, 1e-6);  // last start to last end
  // The two streams are busy at the same times: fully overlapped.
  for (const auto& s : r["streams"]) EXPECT_NEAR(s["overlap_pct"].get<double>(), 100.0, 1e-6);
  EXPECT_NE(report_text(r).find("# straggler: rank 2"), std::string::npos);
}

TEST(ChorusTrace, MergeAddsPhasesAndRoundTrips) {
  std::vector<RankFile> files;
  for (int r = 0; r < 3; ++r)
    for (auto& f : load(write_rank(r, false))) files.push_back(std::move(f));
  const auto merged = merge(files);
  int waits = 0, transfers = 0;
  for (const auto& e : merged["traceEvents"]) {
    if (e.value("cat", "") != "chorus.phase") continue;
    if (e["name"] == "arrival wait") {
      ++waits;
      EXPECT_NE(e["pid"], 2);  // the late rank does not wait for anyone
    }
    if (e["name"] == "transfer") ++transfers;
  }
  EXPECT_EQ(waits, 2 * 20);
  EXPECT_EQ(transfers, 3 * 20);
  const std::string path = std::string(CHORUS_TRACE_TEST_DIR) + "/synthetic.merged.json";
  std::ofstream(path) << merged.dump();
  const auto back = load(path);
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ(report(back)["straggler"], 2);
}

// Two ranks, one hier all_reduce each with its three levels (rank 1's across-hosts level
// takes 300 us, rank 0's 100 us).
std::string write_levels_rank(int rank) {
  const std::string path =
      std::string(CHORUS_TRACE_TEST_DIR) + "/levels." + std::to_string(rank) + ".json";
  std::ofstream out(path);
  out << "{\"otherData\":{\"chorus_timeline\":1,\"rank\":" << rank << ",\"size\":2},"
         "\"traceEvents\":[\n{\"ph\":\"M\",\"name\":\"chorus_comm\",\"pid\":"
      << rank << ",\"args\":{\"comm\":0,\"key\":\"comm0\",\"rank\":" << rank << ",\"size\":2}}";
  out << span(rank, 1, "all_reduce", 0, 1000, 1000, 0, "default");
  const char* names[3] = {"host reduce_scatter", "across hosts all_reduce", "host all_gather"};
  const double dur[3] = {200, rank == 1 ? 300.0 : 100.0, 200};
  double ts = 1000;
  for (int i = 0; i < 3; ++i) {
    out << ",\n{\"ph\":\"X\",\"cat\":\"chorus.level\",\"name\":\"" << names[i] << "\",\"pid\":"
        << rank << ",\"tid\":1,\"ts\":" << ts << ",\"dur\":" << dur[i] << ",\"args\":{\"level\":"
        << i + 1 << ",\"via\":\"" << (i == 1 ? "" : "windows")
        << "\",\"op\":\"all_reduce\",\"comm\":0,\"seq\":0}}";
    ts += dur[i];
  }
  out << "\n]}\n";
  return path;
}

int count_levels(const nlohmann::json& trace) {
  int n = 0;
  for (const auto& e : trace["traceEvents"]) n += e.value("cat", "") == "chorus.level";
  return n;
}

TEST(ChorusTrace, MergeKeepsLevelsAndReportSummarisesThem) {
  std::vector<RankFile> files;
  for (int r = 0; r < 2; ++r)
    for (auto& f : load(write_levels_rank(r))) files.push_back(std::move(f));
  ASSERT_EQ(files[0].levels.size(), 3u);
  EXPECT_EQ(files[0].spans.size(), 1u) << "a level is not an operation";
  const auto merged = merge(files);
  EXPECT_EQ(count_levels(merged), 6);
  const std::string path = std::string(CHORUS_TRACE_TEST_DIR) + "/levels.merged.json";
  std::ofstream(path) << merged.dump();
  const auto back = load(path);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(count_levels(merge(back)), 6) << "merging a merged trace keeps each level once";
  const auto r = report(back);
  ASSERT_EQ(r["levels"].size(), 3u);
  const auto& first = r["levels"][0];  // ordered by (op, level, name)
  EXPECT_EQ(first["level"], 1);
  EXPECT_EQ(first["name"], "host reduce_scatter");
  EXPECT_EQ(first["via"], "windows");
  EXPECT_EQ(r["levels"][1]["name"], "across hosts all_reduce");
  EXPECT_EQ(r["levels"][1]["count"], 2);
  EXPECT_NEAR(r["levels"][1]["time_p50_us"].get<double>(), 100.0, 1e-6);
  EXPECT_NEAR(r["levels"][1]["time_p99_us"].get<double>(), 300.0, 1e-6);
  EXPECT_NE(report_text(r).find("2 across hosts all_reduce"), std::string::npos);
}

}  // namespace
}  // namespace chorus_trace
