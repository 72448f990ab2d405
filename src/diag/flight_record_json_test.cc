// The flight recorder's JSON dump parses back to what was recorded (schema, header,
// summary, every entry, nulls for fields that do not apply, the error of a failed op).
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "diag/flight_recorder.h"

namespace chorus::diag {
namespace {

using Json = nlohmann::json;

TEST(FlightRecordJsonTest, ParsesBackToTheRecordedOperations) {
  FlightRecorder fr(3, 7, 1, 4);
  OpIdentity ar;
  ar.name = "all_reduce";
  ar.dtype = "float32";
  ar.redop = "sum";
  ar.count = 1024;
  ar.bytes = 4096;
  for (std::uint64_t s = 0; s < 4; ++s) {  // seq 0 falls out of the 3-entry ring
    ar.seq = s;
    const auto id = fr.issue(ar);
    fr.start(id, "ring");
    fr.done(id);
  }
  OpIdentity bc;
  bc.seq = 4;
  bc.name = "broadcast";
  bc.dtype = "int8";
  bc.count = 3;
  bc.root = 2;
  bc.bytes = 3;
  const auto id = fr.issue(bc);
  fr.start(id, "tree");
  fr.failed(id, "peer_lost: \"rank 2\"\n\xff gone");  // quotes, newline, invalid UTF-8

  const std::string text = fr.dump_json("api");
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(text.find('\n'), text.size() - 1) << "one line per dump";
  const Json j = Json::parse(text);
  EXPECT_EQ(j.at("schema"), "chorus.flight_record");
  EXPECT_EQ(j.at("version"), 1);
  EXPECT_EQ(j.at("comm"), 7);
  EXPECT_EQ(j.at("rank"), 1);
  EXPECT_EQ(j.at("size"), 4);
  EXPECT_EQ(j.at("host"), this_host());
  EXPECT_EQ(j.at("pid"), static_cast<long>(::getpid()));
  EXPECT_EQ(j.at("reason"), "api");
  EXPECT_EQ(j.at("recorded"), 5);
  EXPECT_EQ(j.at("capacity"), 3);
  EXPECT_EQ(j.at("last_completed").at("seq"), 3);
  EXPECT_EQ(j.at("last_completed").at("op"), "all_reduce");
  EXPECT_EQ(j.at("current").at("seq"), 4);
  EXPECT_EQ(j.at("current").at("state"), "failed");
  const std::string time = j.at("time");
  EXPECT_EQ(time.size(), 27u) << time;  // 2024-05-01T12:00:00.123456Z
  EXPECT_EQ(time.back(), 'Z');

  const Json& e = j.at("entries");
  ASSERT_EQ(e.size(), 3u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(e[i].at("seq"), 2 + i);
    EXPECT_EQ(e[i].at("op"), "all_reduce");
    EXPECT_EQ(e[i].at("dtype"), "float32");
    EXPECT_EQ(e[i].at("count"), 1024);
    EXPECT_EQ(e[i].at("redop"), "sum");
    EXPECT_TRUE(e[i].at("root").is_null());
    EXPECT_TRUE(e[i].at("peer").is_null());
    EXPECT_EQ(e[i].at("bytes"), 4096);
    EXPECT_EQ(e[i].at("algo"), "ring");
    EXPECT_EQ(e[i].at("state"), "done");
    EXPECT_GE(e[i].at("wait_us").get<std::int64_t>(), 0);
    EXPECT_GE(e[i].at("run_us").get<std::int64_t>(), 0);
    EXPECT_TRUE(e[i].at("error").is_null());
  }
  EXPECT_EQ(e[2].at("op"), "broadcast");
  EXPECT_EQ(e[2].at("root"), 2);
  EXPECT_TRUE(e[2].at("redop").is_null());
  EXPECT_EQ(e[2].at("state"), "failed");
  const std::string err = e[2].at("error");
  EXPECT_EQ(err.rfind("peer_lost: \"rank 2\"\n", 0), 0u) << err;
  EXPECT_NE(err.find(" gone"), std::string::npos) << err;
}

TEST(FlightRecordJsonTest, EmptyRecorderHasNullSummaryAndNoEntries) {
  FlightRecorder fr(0, 0, 0, 1);
  const Json j = Json::parse(fr.dump_json("sigusr1"));
  EXPECT_EQ(j.at("capacity"), 0);
  EXPECT_EQ(j.at("recorded"), 0);
  EXPECT_TRUE(j.at("last_completed").is_null());
  EXPECT_TRUE(j.at("current").is_null());
  EXPECT_TRUE(j.at("entries").is_array());
  EXPECT_TRUE(j.at("entries").empty());
}

}  // namespace
}  // namespace chorus::diag
