// CHORUS_DEBUG_FILE and CHORUS_FLIGHT_RECORDER_FORMAT with real rank processes: a failure
// writes each rank's dump (and rank 0's hang report) into that rank's own file instead of
// stderr, SIGUSR1 dumps land there too, JSON dumps parse, and
// Communicator::flight_record_json() matches the operations run.
#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <vector>

#include "failure_util.h"

namespace chorus {
namespace {

using namespace chorus::testing;  // NOLINT
using std::chrono::milliseconds;
using Json = nlohmann::json;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string host_name() {
  char buf[256] = {0};
  ::gethostname(buf, sizeof(buf) - 1);
  return buf;
}

// A directory for the debug files, made before the fork (the pattern must be in the
// environment the children inherit) and removed by the destructor.
class DebugDir {
 public:
  DebugDir() {
    char tmpl[] = "/tmp/chorus-debug-file-XXXXXX";
    const char* d = ::mkdtemp(tmpl);
    EXPECT_NE(d, nullptr);
    path_ = d != nullptr ? d : "";
  }
  ~DebugDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
    ::unsetenv("CHORUS_DEBUG_FILE");
    ::unsetenv("CHORUS_FLIGHT_RECORDER_FORMAT");
  }
  const std::string& path() const { return path_; }
  std::vector<std::string> files() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(path_))
      out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  std::string path_;
};

// This rank's file under the pattern "<dir>/chorus.%h.%p.r%r.log".
std::string my_file(const std::string& dir) {
  return dir + "/chorus." + host_name() + "." + std::to_string(::getpid()) + ".r" +
         std::to_string(this_rank().rank) + ".log";
}

// JSON lines of `text` that are flight-recorder dumps.
std::vector<Json> json_dumps(const std::string& text) {
  std::vector<Json> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("{\"schema\":\"chorus.flight_record\"", 0) != 0) continue;
    out.push_back(Json::parse(line));
  }
  return out;
}

// Redirects this rank's stderr to <temp>/stderr.<rank>; returns that path.
std::string capture_stderr() {
  const std::string path = this_rank().temp_dir + "/stderr." + std::to_string(this_rank().rank);
  check(std::freopen(path.c_str(), "w", stderr) != nullptr, "redirecting stderr");
  return path;
}

// 4 ranks loop; rank 2 leaves before step 5 (after seq 9). Every survivor's failure dump
// (JSON) goes to its own file, rank 0's file also holds the hang report; stderr gets none.
TEST(DebugFile, FailureDumpsGoToEachRanksOwnFile) {
  DebugDir dir;
  ::setenv("CHORUS_DEBUG_FILE", (dir.path() + "/chorus.%h.%p.r%r.log").c_str(), 1);
  ::setenv("CHORUS_FLIGHT_RECORDER_FORMAT", "json", 1);
  constexpr int kLeaver = 2;
  const std::string d = dir.path();
  auto body = [d](Communicator& comm) {
    const std::string err = capture_stderr();
    std::vector<float> v(256, 1.0f), sum(256), all(64 * comm.size());
    for (int s = 0; s < 100; ++s) {
      if (comm.rank() == kLeaver && s == 5) return;
      try {
        comm.all_reduce(v.data(), sum.data(), v.size(), DataType::kFloat32, ReduceOp::kSum);
        comm.all_gather(v.data(), all.data(), 64, DataType::kFloat32);
      } catch (const Error& e) {
        check(e.code() == ErrorCode::kPeerLost, std::string("expected peer_lost: ") + e.what());
        break;
      }
    }
    const std::string text = slurp(my_file(d));
    const std::vector<Json> dumps = json_dumps(text);
    check(dumps.size() == 1, "expected one JSON dump in " + my_file(d) + ":\n" + text);
    const Json& j = dumps[0];
    check(j.at("reason") == "failure" && j.at("rank") == comm.rank() &&
              j.at("pid") == static_cast<long>(::getpid()),
          "wrong dump header: " + j.dump());
    // Seq 10, the all_reduce rank 2 never joins, fails; a survivor still behind in seq 9
    // (4 ranks on 2 processors) may instead learn of the loss from a peer's abort before
    // it finishes seq 9, and fail there: either way the failed operation names the loss.
    const int failed = j.at("current").at("seq").get<int>();
    check((failed == 10 || failed == 9) && j.at("last_completed").at("seq") == failed - 1 &&
              j.at("current").at("state") == "failed",
          "wrong summary: " + j.dump());
    const Json& last = j.at("entries").back();
    check(last.at("seq") == failed &&
              last.at("op") == (failed == 10 ? "all_reduce" : "all_gather") &&
              last.at("state") == "failed" &&
              last.at("error").get<std::string>().find("was lost; ") != std::string::npos,
          "wrong last entry: " + last.dump());
    if (comm.rank() == 0) {
      check(text.find("chorus hang report v1 (comm 0, 4 ranks, printed by rank 0):") !=
                    std::string::npos &&
                text.find("chorus hang report end (comm 0)") != std::string::npos,
            "no hang report in rank 0's file:\n" + text);
    }
    std::fflush(stderr);
    const std::string stderr_text = slurp(err);
    check(stderr_text.find("chorus.flight_record") == std::string::npos &&
              stderr_text.find("chorus hang report") == std::string::npos,
          "a dump or report went to stderr:\n" + stderr_text);
  };
  RunOptions opts;
  opts.stop_on_failure = false;
  opts.options.timeout = milliseconds(20000);
  auto r = RankRunner::run(4, body, milliseconds(30000), opts);
  EXPECT_TRUE(all_ok(r));
  // One file per rank that wrote something, each named with its rank; none truncated
  // another (every survivor's check above saw its own dump).
  int survivors = 0;
  for (const std::string& f : dir.files()) {
    EXPECT_EQ(f.rfind("chorus." + host_name() + ".", 0), 0u) << f;
    if (f.find(".r2.log") == std::string::npos) ++survivors;
  }
  EXPECT_EQ(survivors, 3) << "files: " << ::testing::PrintToString(dir.files());
}

// SIGUSR1 with CHORUS_FLIGHT_RECORDER_FORMAT=json: the dump lands in the rank's file and
// parses; the job is undisturbed. flight_record_json() lists the same operations.
TEST(DebugFile, SigusrOneJsonDumpGoesToTheFile) {
  DebugDir dir;
  ::setenv("CHORUS_DEBUG_FILE", (dir.path() + "/chorus.%h.%p.r%r.log").c_str(), 1);
  ::setenv("CHORUS_FLIGHT_RECORDER_FORMAT", "json", 1);
  const std::string d = dir.path();
  auto body = [d](Communicator& comm) {
    std::vector<int> pid(1, static_cast<int>(::getpid())), pids(2);
    comm.all_gather(pid.data(), pids.data(), 1, DataType::kInt32);  // seq 0
    if (comm.rank() == 0) check(::kill(pids[1], SIGUSR1) == 0, "kill(SIGUSR1)");
    std::vector<std::int64_t> v(64, 1), out(64);
    for (int i = 0; i < 20; ++i) {  // seq 1..20
      comm.all_reduce(v.data(), out.data(), v.size(), DataType::kInt64, ReduceOp::kSum);
      check(out[0] == 2, "wrong all_reduce result");
    }
    const Json api = Json::parse(comm.flight_record_json());
    check(api.at("schema") == "chorus.flight_record" && api.at("version") == 1 &&
              api.at("reason") == "api" && api.at("recorded") == 21 &&
              api.at("entries").size() == 21 && api.at("entries")[0].at("op") == "all_gather" &&
              api.at("entries")[20].at("seq") == 20 && api.at("last_completed").at("seq") == 20,
          "flight_record_json(): " + api.dump());
    if (comm.rank() != 1) return;
    std::vector<Json> dumps;
    for (int tries = 0; tries < 250 && dumps.empty(); ++tries) {
      dumps = json_dumps(slurp(my_file(d)));
      if (dumps.empty()) std::this_thread::sleep_for(milliseconds(20));
    }
    check(dumps.size() == 1, "no SIGUSR1 dump in " + my_file(d));
    check(dumps[0].at("reason") == "sigusr1" && dumps[0].at("rank") == 1 &&
              dumps[0].at("entries")[0].at("op") == "all_gather",
          "SIGUSR1 dump: " + dumps[0].dump());
  };
  EXPECT_TRUE(all_ok(RankRunner::run(2, body, milliseconds(30000))));
  const std::vector<std::string> files = dir.files();
  EXPECT_EQ(files.size(), 1u) << ::testing::PrintToString(files);  // only rank 1 wrote
}

}  // namespace
}  // namespace chorus
