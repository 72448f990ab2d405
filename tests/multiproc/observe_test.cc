// Observation with real rank processes (issue 13): the chorus::Profiler hook (events,
// fields, threads), the CHORUS_TIMELINE file (spans, tracks, clock alignment, seq numbers
// matching across ranks, a sub-communicator's own track) and Options::stats.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <vector>

#include "chorus/communicator.h"
#include "chorus/profiler.h"
#include "rank_runner.h"

namespace chorus {
namespace {

using namespace chorus::testing;  // NOLINT
using std::chrono::milliseconds;
using Json = nlohmann::json;

struct Seen {
  bool start;
  OpEvent e;
  std::thread::id thread;
};

class Recorder : public Profiler {
 public:
  void on_start(const OpEvent& e) override { add(true, e); }
  void on_end(const OpEvent& e) override { add(false, e); }
  std::vector<Seen> events() {
    std::lock_guard<std::mutex> g(mu_);
    return seen_;
  }

 private:
  void add(bool start, const OpEvent& e) {
    std::lock_guard<std::mutex> g(mu_);
    seen_.push_back({start, e, std::this_thread::get_id()});
  }
  std::mutex mu_;
  std::vector<Seen> seen_;
};

void expect_true(bool cond, const std::string& what) {
  if (!cond) throw std::runtime_error(what);
}

TEST(Observe, ProfilerGetsStartAndEndOnTheRunningThread) {
  auto r = RankRunner::run(3, [](Communicator& comm) {
    auto rec = std::make_shared<Recorder>();
    comm.set_profiler(rec);
    std::vector<float> a(1024, 1.0f), g(3 * 256);
    comm.all_reduce(a.data(), a.data(), a.size(), DataType::kFloat32, ReduceOp::kSum);
    Stream s = comm.create_stream("side");
    comm.all_gather_async(a.data(), g.data(), 256, DataType::kFloat32, s).wait();
    comm.barrier();
    const auto ev = rec->events();
    expect_true(ev.size() == 6, "expected 6 events, got " + std::to_string(ev.size()));
    const std::thread::id me = std::this_thread::get_id();
    // all_reduce: start then end, on this thread, with its identity.
    expect_true(ev[0].start && !ev[1].start, "all_reduce start/end order");
    const OpEvent& ar = ev[1].e;
    expect_true(std::string(ar.name) == "all_reduce" && ar.seq == ev[0].e.seq, "all_reduce identity");
    expect_true(ar.bytes == 4096 && ar.count == 1024 && std::string(ar.dtype) == "float32" &&
                    std::string(ar.redop) == "sum" && ar.root == -1 && ar.size == 3 &&
                    ar.rank == comm.rank(), "all_reduce fields");
    expect_true(ar.ok && ar.end_ns >= ar.start_ns && ar.start_ns >= ar.issue_ns && *ar.algo,
                "all_reduce times/algo");
    expect_true(ev[0].thread == me && ev[1].thread == me, "blocking op on the caller's thread");
    // all_gather on stream "side": on its worker, nccl-tests size (whole receive buffer).
    const OpEvent& ag = ev[3].e;
    expect_true(std::string(ag.name) == "all_gather" && ag.seq == ar.seq + 1, "all_gather seq");
    expect_true(std::string(ag.stream_name) == "side" && ag.stream == 1, "all_gather stream");
    expect_true(ag.bytes == 3 * 256 * 4, "all_gather bytes " + std::to_string(ag.bytes));
    expect_true(ev[2].thread == ev[3].thread && ev[3].thread != me, "async op on the worker");
    expect_true(std::string(ev[5].e.name) == "barrier" && ev[5].e.bytes == 0, "barrier");
    comm.set_profiler(nullptr);
    comm.barrier();
    expect_true(rec->events().size() == 6, "no events after set_profiler(nullptr)");
  }, milliseconds(60000));
  EXPECT_TRUE(all_ok(r));
}

TEST(Observe, OptionsStatsCountEveryOperation) {
  RunOptions opts;
  opts.options.stats = true;
  auto r = RankRunner::run(2, [](Communicator& comm) {
    std::vector<float> a(1 << 18, 1.0f);  // 1 MiB
    for (int i = 0; i < 7; ++i)
      comm.all_reduce(a.data(), a.data(), a.size(), DataType::kFloat32, ReduceOp::kSum);
    std::vector<float> b(1000);  // 4000 B: class 2K
    comm.broadcast(b.data(), b.data(), b.size(), DataType::kFloat32, 0);
    bool found_ar = false, found_b = false;
    for (const OpStatsRow& row : comm.stats()) {
      if (row.op == "all_reduce" && row.size_class == (1u << 20)) {
        found_ar = true;
        expect_true(row.count == 7 && row.bytes == 7u << 20, "all_reduce count/bytes");
        expect_true(row.mean_us > 0 && row.p50_us > 0 && row.p99_us >= row.p50_us &&
                        row.max_us >= row.mean_us && row.busbw_gbps > 0, "all_reduce times");
      }
      if (row.op == "broadcast" && row.size_class == 2048) found_b = row.count == 1 && row.bytes == 4000;
    }
    expect_true(found_ar && found_b, "rows:\n" + comm.stats_text());
  }, milliseconds(60000), opts);
  EXPECT_TRUE(all_ok(r));
}

TEST(Observe, StatsAreEmptyWhenOff) {
  auto r = RankRunner::run(2, [](Communicator& comm) {
    comm.barrier();
    expect_true(comm.stats().empty(), "stats collected without CHORUS_STATS or Options::stats");
  }, milliseconds(60000));
  EXPECT_TRUE(all_ok(r));
}

Json load(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return Json::parse(ss.str());
}

TEST(Observe, TimelineFilePerRank) {
  char tmpl[] = "/tmp/chorus-timeline-XXXXXX";
  const std::string dir = ::mkdtemp(tmpl);
  const std::string pattern = dir + "/tl.%r.json";
  RunOptions opts;
  opts.before_init = [pattern](int) { ::setenv("CHORUS_TIMELINE", pattern.c_str(), 1); };
  auto r = RankRunner::run(3, [](Communicator& comm) {
    std::vector<float> a(4096, 1.0f);
    for (int i = 0; i < 4; ++i)
      comm.all_reduce(a.data(), a.data(), a.size(), DataType::kFloat32, ReduceOp::kSum);
    auto half = comm.split(comm.rank() == 2 ? 1 : 0, comm.rank());
    half->barrier();
    Stream s = comm.create_stream("dp");
    comm.broadcast_async(a.data(), a.data(), a.size(), DataType::kFloat32, 1, s).wait();
  }, milliseconds(60000), opts);
  ASSERT_TRUE(all_ok(r));
  std::vector<std::vector<std::pair<std::string, unsigned long long>>> world_ops(3);
  for (int rank = 0; rank < 3; ++rank) {
    const Json j = load(dir + "/tl." + std::to_string(rank) + ".json");
    const Json& other = j["otherData"];
    EXPECT_EQ(other["chorus_timeline"], 1);
    EXPECT_EQ(other["rank"], rank);
    EXPECT_EQ(other["size"], 3);
    EXPECT_EQ(other["clock"]["reference_rank"], 0);
    EXPECT_GE(other["clock"]["error_us"].get<double>(), 0.0);
    if (rank > 0) {
      EXPECT_EQ(other["clock"]["method"], "store round trip");
    }
    int comms = 0, tracks = 0;
    std::string split_key;
    for (const Json& e : j["traceEvents"]) {
      if (e["ph"] == "M" && e["name"] == "chorus_comm") {
        ++comms;
        if (e["args"]["comm"] == 1) split_key = e["args"]["key"];
      }
      if (e["ph"] == "M" && e["name"] == "thread_name") ++tracks;
      if (e["ph"] != "X") continue;
      EXPECT_EQ(e["pid"], rank);
      EXPECT_GE(e["dur"].get<double>(), 0.0);
      if (e["args"]["comm"] == 0)
        world_ops[rank].push_back({e["name"], e["args"]["seq"].get<unsigned long long>()});
      if (e["name"] == "broadcast") {
        EXPECT_EQ(e["args"]["stream"], "dp");
        EXPECT_EQ(e["args"]["root"], 1);
        EXPECT_EQ(e["args"]["bytes"], 4096 * 4);
      }
    }
    EXPECT_EQ(comms, 2) << "world and the split communicator";
    EXPECT_GE(tracks, 3) << "world default + dp streams, split default";
    EXPECT_NE(split_key.find(rank == 2 ? "/c1/" : "/c0/"), std::string::npos) << split_key;
  }
  ASSERT_EQ(world_ops[0].size(), 6u);  // 4 all_reduce, split, broadcast
  EXPECT_EQ(world_ops[0], world_ops[1]);
  EXPECT_EQ(world_ops[0], world_ops[2]);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace chorus
