// Timeline: the file is valid Chrome-trace JSON with the clock record, tracks and spans,
// shared by several users and closed by the last one.
#include "diag/timeline.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

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

}  // namespace
}  // namespace chorus::diag
