// The levels of hierarchical algorithms (issue 13) with real rank processes on two
// emulated hosts (CHORUS_HOST_ID): child spans ("cat":"chorus.level") inside each hier
// operation's span in every rank's CHORUS_TIMELINE file, and OpEvent::levels for a
// chorus::Profiler.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "chorus/communicator.h"
#include "chorus/profiler.h"
#include "rank_runner.h"

namespace chorus {
namespace {

using namespace chorus::testing;  // NOLINT
using std::chrono::milliseconds;
using Json = nlohmann::json;
using Names = std::vector<std::string>;

constexpr const char* kHier =
    "all_reduce:hier,broadcast:hier,reduce:hier,reduce_scatter:hier,all_gather:hier";

// 2 hosts x 2 ranks: ranks 0, 1 on host 0 and 2, 3 on host 1; hierarchical algorithms.
RunOptions two_hosts(const std::string& timeline) {
  RunOptions o;
  o.options.algo = kHier;
  o.before_init = [timeline](int rank) {
    ::setenv("CHORUS_HOST_ID", ("levels-host-" + std::to_string(rank / 2)).c_str(), 1);
    if (!timeline.empty()) ::setenv("CHORUS_TIMELINE", timeline.c_str(), 1);
  };
  return o;
}

void run_ops(Communicator& comm) {
  std::vector<float> a(4096, 1.0f), b(4096);
  comm.all_reduce(a.data(), b.data(), a.size(), DataType::kFloat32, ReduceOp::kSum);
  check(b[7] == 4.0f, "all_reduce result " + std::to_string(b[7]));
  comm.broadcast(a.data(), b.data(), a.size(), DataType::kFloat32, /*root=*/1);
  comm.reduce(a.data(), comm.rank() == 2 ? b.data() : nullptr, a.size(), DataType::kFloat32,
              ReduceOp::kSum, /*root=*/2);
  comm.barrier();
}

Json load(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return Json::parse(ss.str());
}

// The level names each rank must show, per operation.
Names want(const std::string& op, int rank) {
  if (op == "all_reduce") return {"host reduce_scatter", "across hosts all_reduce", "host all_gather"};
  if (op == "broadcast") {  // root 1 and rank 2 (host 1's lowest) cross hosts
    if (rank == 1 || rank == 2) return {"across hosts broadcast", "host broadcast"};
    return {"host broadcast"};
  }
  if (op == "reduce") {  // root 2 and rank 0 (host 0's lowest) cross hosts
    if (rank == 0 || rank == 2) return {"host reduce", "across hosts reduce"};
    return {"host reduce"};
  }
  return {};
}

TEST(ObserveLevels, TimelineHasEachLevelOfHierOpsNestedInTheirSpans) {
  char tmpl[] = "/tmp/chorus-levels-XXXXXX";
  const std::string dir = ::mkdtemp(tmpl);
  auto r = RankRunner::run(4, run_ops, milliseconds(90000), two_hosts(dir + "/tl.%r.json"));
  ASSERT_TRUE(all_ok(r));
  for (int rank = 0; rank < 4; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    const Json j = load(dir + "/tl." + std::to_string(rank) + ".json");
    std::map<unsigned long long, Json> ops;               // seq -> the op's span
    std::map<unsigned long long, std::vector<Json>> lv;   // seq -> its levels, file order
    for (const Json& e : j["traceEvents"]) {
      if (e["ph"] != "X") continue;
      const unsigned long long seq = e["args"]["seq"];
      if (e["cat"] == "chorus" && e["args"]["comm"] == 0) ops[seq] = e;
      if (e["cat"] == "chorus.level") lv[seq].push_back(e);
    }
    int checked = 0;
    for (const auto& [seq, op] : ops) {
      const std::string name = op["name"];
      const Names expected = want(name, rank);
      Names got;
      double at = op["ts"].get<double>();
      const double end = at + op["dur"].get<double>();
      for (const Json& l : lv[seq]) {
        got.push_back(l["name"]);
        EXPECT_EQ(l["pid"], op["pid"]);
        EXPECT_EQ(l["tid"], op["tid"]);
        EXPECT_EQ(l["args"]["op"], name);
        const double ts = l["ts"].get<double>(), te = ts + l["dur"].get<double>();
        EXPECT_GE(ts, at - 1e-3) << l.dump();  // in order, one after another, inside
        EXPECT_LE(te, end + 1e-3) << l.dump();
        at = te;
        const std::string n = l["name"];
        // Within an emulated host the ranks share shm windows; across hosts: TCP.
        EXPECT_EQ(l["args"]["via"], n.rfind("host ", 0) == 0 ? "windows" : "") << n;
      }
      EXPECT_EQ(got, expected) << name << " seq " << seq;
      if (!expected.empty()) {
        EXPECT_EQ(op["args"]["algo"], "hier") << name;
        ++checked;
      }
    }
    EXPECT_EQ(checked, 3) << "all_reduce, broadcast and reduce";
  }
  std::filesystem::remove_all(dir);
}

// Copies each on_end's levels (valid during the call only).
class LevelRecorder : public Profiler {
 public:
  void on_start(const OpEvent& e) override {
    std::lock_guard<std::mutex> g(mu_);
    start_levels_ += e.num_levels;
  }
  void on_end(const OpEvent& e) override {
    std::lock_guard<std::mutex> g(mu_);
    Names& n = by_op_[e.name];
    for (int i = 0; i < e.num_levels; ++i) {
      n.push_back(e.levels[i].name);
      if (e.levels[i].start_ns < e.start_ns || e.levels[i].end_ns > e.end_ns)
        outside_ = true;
    }
  }
  std::mutex mu_;
  std::map<std::string, Names> by_op_;
  int start_levels_ = 0;
  bool outside_ = false;
};

TEST(ObserveLevels, ProfilerGetsTheLevelsWithoutTimeline) {
  auto r = RankRunner::run(4, [](Communicator& comm) {
    auto rec = std::make_shared<LevelRecorder>();
    comm.set_profiler(rec);
    run_ops(comm);
    comm.set_profiler(nullptr);
    std::lock_guard<std::mutex> g(rec->mu_);
    for (const char* op : {"all_reduce", "broadcast", "reduce", "barrier"})
      check(rec->by_op_[op] == want(op, comm.rank()),
            std::string(op) + ": wrong levels (" + std::to_string(rec->by_op_[op].size()) + ")");
    check(rec->start_levels_ == 0, "levels in on_start");
    check(!rec->outside_, "a level outside its operation's start..end");
  }, milliseconds(90000), two_hosts(""));
  EXPECT_TRUE(all_ok(r));
}

}  // namespace
}  // namespace chorus
