// Timeline: the file is valid Chrome-trace JSON with the clock record, tracks and spans,
// shared by several users and closed by the last one; levels are child spans.
#include "diag/timeline.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

namespace chorus::diag {
namespace {

TEST(Timeline, WritesSpansTracksAndClock) {
  char tmpl[] = "/tmp/chorus-timeline-unit-XXXXXX";
  const std::string dir = ::mkdtemp(tmpl);
  Timeline& t = Timeline::process();
  ClockAlignment c;
  c.offset_ns = 2000;
  c.error_ns = 500;
  c.samples = 5;
  c.method = "store round trip";
  ASSERT_TRUE(t.acquire(dir + "/tl.%r.json", 3, 4, c));
  ASSERT_TRUE(t.acquire("ignored: already open", 3, 4, c));  // a second communicator
  t.add_comm(0, "comm0", 3, 4);
  OpEvent e;
  e.comm_id = 0;
  e.rank = 3;
  e.size = 4;
  e.seq = 7;
  e.name = "all_reduce";
  e.dtype = "float32";
  e.count = 256;
  e.bytes = 1024;
  e.algo = "ring";
  e.stream = 1;
  e.stream_name = "tp \"quoted\"";
  e.issue_ns = 9000;
  e.start_ns = 10000;
  e.end_ns = 15000;
  t.span(e);
  t.release();
  EXPECT_TRUE(t.is_open());
  t.release();
  EXPECT_FALSE(t.is_open());
  std::ifstream in(dir + "/tl.3.json");
  std::stringstream ss;
  ss << in.rdbuf();
  const auto j = nlohmann::json::parse(ss.str());
  EXPECT_EQ(j["otherData"]["rank"], 3);
  EXPECT_DOUBLE_EQ(j["otherData"]["clock"]["offset_us"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(j["otherData"]["clock"]["error_us"].get<double>(), 0.5);
  int spans = 0, tracks = 0;
  for (const auto& ev : j["traceEvents"]) {
    if (ev["ph"] == "M" && ev["name"] == "thread_name") {
      ++tracks;
      EXPECT_EQ(ev["tid"], 2);
      EXPECT_EQ(ev["args"]["name"], "comm 0 stream tp \"quoted\"");
    }
    if (ev["ph"] != "X") continue;
    ++spans;
    EXPECT_DOUBLE_EQ(ev["ts"].get<double>(), 12.0);  // (10000 + 2000) ns
    EXPECT_DOUBLE_EQ(ev["dur"].get<double>(), 5.0);
    EXPECT_EQ(ev["args"]["seq"], 7);
    EXPECT_DOUBLE_EQ(ev["args"]["queued_us"].get<double>(), 1.0);
  }
  EXPECT_EQ(spans, 1);
  EXPECT_EQ(tracks, 1);
  std::filesystem::remove_all(dir);
}

// A hierarchical operation's levels become child spans on the op's track, inside its
// [ts, ts + dur], in order, with their level number and path.
TEST(Timeline, LevelsAreChildSpansInsideTheirOperation) {
  char tmpl[] = "/tmp/chorus-timeline-unit-XXXXXX";
  const std::string dir = ::mkdtemp(tmpl);
  Timeline& t = Timeline::process();
  ClockAlignment c;
  c.offset_ns = 1000;
  ASSERT_TRUE(t.acquire(dir + "/tl.%r.json", 1, 4, c));
  OpLevel levels[3];
  const char* names[3] = {"host reduce_scatter", "across hosts all_reduce", "host all_gather"};
  const char* via[3] = {"windows", "", "windows"};
  for (int i = 0; i < 3; ++i) {
    levels[i].name = names[i];
    levels[i].level = i + 1;
    levels[i].via = via[i];
    levels[i].start_ns = 20000 + i * 3000;
    levels[i].end_ns = 22500 + i * 3000;
  }
  levels[2].end_ns = 40000;  // past the op's end: clamped to it
  OpEvent e;
  e.rank = 1;
  e.size = 4;
  e.seq = 3;
  e.name = "all_reduce";
  e.algo = "hier";
  e.start_ns = 19500;
  e.end_ns = 30000;
  e.levels = levels;
  e.num_levels = 3;
  t.span(e);
  OpEvent plain = e;  // no levels: no children
  plain.seq = 4;
  plain.levels = nullptr;
  plain.num_levels = 0;
  t.span(plain);
  t.release();
  std::ifstream in(dir + "/tl.1.json");
  std::stringstream ss;
  ss << in.rdbuf();
  const auto j = nlohmann::json::parse(ss.str());
  std::vector<nlohmann::json> ops, children;
  for (const auto& ev : j["traceEvents"]) {
    if (ev["ph"] != "X") continue;
    (ev["cat"] == "chorus" ? ops : children).push_back(ev);
  }
  ASSERT_EQ(ops.size(), 2u);
  ASSERT_EQ(children.size(), 3u);
  const auto& op = ops[0];
  EXPECT_DOUBLE_EQ(op["ts"].get<double>(), 20.5);
  const double op_end = op["ts"].get<double>() + op["dur"].get<double>();
  double last_end = op["ts"].get<double>();
  for (int i = 0; i < 3; ++i) {
    const auto& ch = children[static_cast<std::size_t>(i)];
    EXPECT_EQ(ch["cat"], "chorus.level");
    EXPECT_EQ(ch["name"], names[i]);
    EXPECT_EQ(ch["pid"], op["pid"]);
    EXPECT_EQ(ch["tid"], op["tid"]);
    EXPECT_EQ(ch["args"]["level"], i + 1);
    EXPECT_EQ(ch["args"]["via"], via[i]);
    EXPECT_EQ(ch["args"]["op"], "all_reduce");
    EXPECT_EQ(ch["args"]["seq"], 3);
    const double ts = ch["ts"].get<double>(), end = ts + ch["dur"].get<double>();
    EXPECT_GE(ts, last_end - 1e-6) << names[i];
    EXPECT_LE(end, op_end + 1e-6) << names[i];
    last_end = end;
  }
  EXPECT_DOUBLE_EQ(children[0]["ts"].get<double>(), 21.0);  // (20000 + 1000) ns
  EXPECT_DOUBLE_EQ(children[0]["dur"].get<double>(), 2.5);
  EXPECT_DOUBLE_EQ(children[2]["dur"].get<double>(), 4.0);  // 26000 .. 30000, clamped
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace chorus::diag
