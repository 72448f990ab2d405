// FlightRecorder: ring wrap-around, state transitions, summary and the v1 dump.
#include "diag/flight_recorder.h"

#include <gtest/gtest.h>

namespace chorus::diag {
namespace {

OpIdentity coll(std::uint64_t seq, const char* name = "all_reduce") {
  OpIdentity op;
  op.seq = seq;
  op.name = name;
  op.dtype = "float32";
  op.redop = "sum";
  op.count = 4;
  op.bytes = 16;
  return op;
}

TEST(FlightRecorderTest, RecordsStatesInOrder) {
  FlightRecorder fr(8, 3, 1, 4);
  auto a = fr.issue(coll(0));
  fr.start(a, "ring");
  fr.done(a);
  auto b = fr.issue(coll(1, "all_gather"));
  fr.start(b, "rhd");
  auto c = fr.issue(coll(2, "barrier"));
  auto v = fr.snapshot();
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].state, OpState::kDone);
  EXPECT_STREQ(v[0].algo, "ring");
  EXPECT_LE(v[0].issue_ns, v[0].start_ns);
  EXPECT_LE(v[0].start_ns, v[0].end_ns);
  EXPECT_EQ(v[1].state, OpState::kStarted);
  EXPECT_EQ(v[2].state, OpState::kIssued);
  fr.failed(c, "peer_lost: rank 2 gone");
  v = fr.snapshot();
  EXPECT_EQ(v[2].state, OpState::kFailed);
  EXPECT_EQ(v[2].error, "peer_lost: rank 2 gone");
}

// A blocking call records its issue and its start in one update: the same entry and
// summary as issue() then start() at the same time.
TEST(FlightRecorderTest, IssueCanStartTheOperation) {
  FlightRecorder fr(4, 0, 0, 2);
  const auto id = fr.issue(coll(7), 1000, "shm");
  auto v = fr.snapshot();
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].state, OpState::kStarted);
  EXPECT_STREQ(v[0].algo, "shm");
  EXPECT_EQ(v[0].issue_ns, 1000);
  EXPECT_EQ(v[0].start_ns, 1000);
  EXPECT_EQ(v[0].end_ns, 0);
  EXPECT_EQ(fr.summary().cur_state, OpState::kStarted);
  EXPECT_EQ(fr.summary().cur_seq, 7);
  fr.done(id);
  EXPECT_EQ(fr.snapshot()[0].state, OpState::kDone);
  EXPECT_EQ(fr.summary().done_seq, 7);
  // Without an algorithm it is only issued, as before.
  fr.issue(coll(8), 2000);
  v = fr.snapshot();
  EXPECT_EQ(v[1].state, OpState::kIssued);
  EXPECT_STREQ(v[1].algo, "");
  EXPECT_EQ(v[1].start_ns, 0);
}

TEST(FlightRecorderTest, WrapsAroundKeepingTheNewest) {
  FlightRecorder fr(4, 0, 0, 2);
  std::uint64_t ids[10];
  for (int i = 0; i < 10; ++i) ids[i] = fr.issue(coll(static_cast<std::uint64_t>(i)));
  fr.done(ids[1]);  // overwritten: ignored, no crash
  fr.done(ids[9]);
  auto v = fr.snapshot();
  ASSERT_EQ(v.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(v[static_cast<std::size_t>(i)].op.seq, 6u + i);
  EXPECT_EQ(v[3].state, OpState::kDone);
  EXPECT_EQ(v[0].state, OpState::kIssued);
}

TEST(FlightRecorderTest, SummaryTracksLastDoneAndCurrent) {
  FlightRecorder fr(2, 0, 0, 2);
  EXPECT_EQ(fr.summary().done_seq, -1);
  for (std::uint64_t s = 0; s < 5; ++s) {
    auto id = fr.issue(coll(s));
    fr.start(id, "ring");
    fr.done(id);
  }
  auto id = fr.issue(coll(5, "all_gather"));
  fr.start(id, "ring");
  FlightSummary sum = fr.summary();
  EXPECT_EQ(sum.done_seq, 4);
  EXPECT_STREQ(sum.done_name, "all_reduce");
  EXPECT_EQ(sum.cur_seq, 5);
  EXPECT_STREQ(sum.cur_name, "all_gather");
  EXPECT_EQ(sum.cur_state, OpState::kStarted);
  fr.failed(id, "x");
  EXPECT_EQ(fr.summary().cur_state, OpState::kFailed);
  EXPECT_EQ(fr.summary().done_seq, 4);
}

TEST(FlightRecorderTest, ZeroCapacityKeepsOnlyTheSummary) {
  FlightRecorder fr(0, 0, 0, 1);
  auto id = fr.issue(coll(0));
  fr.start(id, "ring");
  fr.done(id);
  EXPECT_TRUE(fr.snapshot().empty());
  EXPECT_EQ(fr.summary().done_seq, 0);
}

TEST(FlightRecorderTest, DumpIsVersionedWithOneLinePerEntry) {
  FlightRecorder fr(4, 7, 2, 3);
  auto a = fr.issue(coll(0));
  fr.start(a, "ring");
  fr.done(a);
  OpIdentity p;
  p.seq = 0;
  p.name = "send";
  p.peer = 1;
  p.bytes = 8;
  auto b = fr.issue(p);
  fr.start(b, "p2p");
  fr.failed(b, "peer_lost: \"gone\"\nnext");
  const std::string d = fr.dump("api");
  EXPECT_EQ(d.rfind("chorus flight recorder v1: comm=7 rank=2 size=3 host=", 0), 0u) << d;
  EXPECT_NE(d.find("reason=api"), std::string::npos);
  EXPECT_NE(d.find("recorded=2 capacity=4 entries=2\n"), std::string::npos) << d;
  EXPECT_NE(d.find("  seq=0 op=all_reduce dtype=float32 count=4 redop=sum root=- peer=- "
                   "bytes=16 algo=ring state=done issued="),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("op=send dtype=- count=0 redop=- root=- peer=1 bytes=8 algo=p2p state=failed"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("error=\"peer_lost: 'gone' next\"\n"), std::string::npos) << d;
  EXPECT_NE(d.find("chorus flight recorder end: comm=7 rank=2\n"), std::string::npos);
}

}  // namespace
}  // namespace chorus::diag
