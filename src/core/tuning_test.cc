// The tuning cache and its agreement: the cached parameters are used without a probe, a
// provisional (busy) entry and a corrupt file are measured again and rewritten, the table
// parses (and rejects), and every rank gets rank 0's tuning through the store, rank 0
// probing only once the others wait for it.
#include "core/tuning.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "bootstrap/file_store.h"
#include "core/host_probe.h"
#include "util/strings.h"

namespace chorus::core {
namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char t[] = "/tmp/chorus-tuning-test-XXXXXX";
    path = ::mkdtemp(t);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }
std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A tuning file whose entry for this host has `params_json`; `quiet` is the entry's
// "quiet" field as JSON text (empty: no such field, as written before it existed).
// `probe` the entry's probe revision.
std::string file_with(const std::string& params_json, const std::string& extra = "",
                      const std::string& quiet = "true", int probe = kProbeRevision) {
  return "{\"version\": 1, \"hosts\": {\"" + host_key() + "\": {\"params\": " + params_json +
         (quiet.empty() ? "" : ", \"quiet\": " + quiet) +
         ", \"probe\": " + std::to_string(probe) + "}}" + extra + "}";
}

std::string params_json(double sync_us, double copy_bw_mem = 6000) {
  algo::CostParams p;
  p.sync_us = sync_us;
  p.copy_bw_mem = copy_bw_mem;
  p.cpus = 3;
  std::string out = "{";
  for (const auto& kv : str_split(algo::to_text(p), ';')) {
    const auto eq = kv.find('=');
    out += (out.size() > 1 ? ", \"" : "\"") + kv.substr(0, eq) + "\": " + kv.substr(eq + 1);
  }
  return out + "}";
}

TEST(Tuning, CachedParamsAreUsedWithoutProbe) {
  TempDir d;
  const std::string f = d.path + "/tuning.json";
  write(f, file_with(params_json(123)));
  auto t = local_tuning(f, "");
  ASSERT_TRUE(t.has_value()) << t.status().to_string();
  EXPECT_DOUBLE_EQ(t->cost.sync_us, 123);
  EXPECT_EQ(t->cost.cpus, 3);
  EXPECT_FALSE(t->cost.measured);  // from the file, not the probe
}

// An entry a busy host probed (or one from before "quiet" existed) is measured again; each
// figure keeps the better of the two probes (an impossible 1e9 MB/s copy stays, an
// impossible 1 s hand-off is replaced), and the entry records whether this probe was quiet.
TEST(Tuning, ProvisionalEntryIsProbedAgainKeepingTheBetterFigures) {
  for (const char* quiet : {"false", ""}) {
    TempDir d;
    const std::string f = d.path + "/tuning.json";
    write(f, file_with(params_json(1e6, 1e9), "", quiet));
    auto t = local_tuning(f, "");
    ASSERT_TRUE(t.has_value()) << t.status().to_string();
    EXPECT_TRUE(t->cost.measured) << quiet;
    EXPECT_DOUBLE_EQ(t->cost.copy_bw_mem, 1e9) << quiet;
    EXPECT_LT(t->cost.sync_us, 1e6) << quiet;
    EXPECT_EQ(t->cost.cpus, static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN))) << quiet;
    const std::string now = read(f);
    EXPECT_TRUE(now.find("\"quiet\": true") != std::string::npos ||
                now.find("\"quiet\": false") != std::string::npos)
        << now;
    EXPECT_NE(now.find("probe_ms"), std::string::npos) << now;
  }
}

TEST(Tuning, ProbeIsQuietWhenItsTwoThreadsHadProcessors) {
  EXPECT_TRUE(quiet_probe({1, 1, 1, 1}, 2));   // the probe alone on 2 processors
  EXPECT_FALSE(quiet_probe({1, 2, 1, 3}, 2));  // other tasks ran: a processor was shared
  EXPECT_TRUE(quiet_probe({1, 1, 2, 1}, 2));   // one sample over: a task of a moment
  EXPECT_TRUE(quiet_probe({1, 1}, 1));         // one processor: the probe's thread is all
  EXPECT_TRUE(quiet_probe({7, 7, 9}, 8));
  EXPECT_FALSE(quiet_probe({8, 8, 1}, 8));
  // A two-thread step whose helper found no processor in time kept a default figure.
  EXPECT_FALSE(quiet_probe({1, 1, 1, 1}, 2, 1));
}

// The probe measures process_vm_readv of sources another thread has just written, beyond
// the cache and within it (never slower than beyond), and reads the cache sizes (the last
// level at least the L2). A busy host may leave the two-thread steps without a figure
// (missed), a container may refuse the system call (both figures stay defaults): then only
// the floor holds.
TEST(HostProbe, MeasuresPeerReadsOfAnotherProcessorsWritesWithinAndBeyondTheCache) {
  int missed = 0;
  const algo::CostParams p = probe_host(nullptr, nullptr, &missed);
  const algo::CostParams defaults;
  ASSERT_TRUE(p.measured);
  EXPECT_GE(p.peer_read_bw_cache, p.peer_read_bw);
  EXPECT_GE(p.llc_bytes, p.cache_bytes);
  const bool reads = p.peer_read_bw != defaults.peer_read_bw;  // process_vm_readv allowed
  if (reads && p.cpus >= 2 && missed == 0) {
    EXPECT_NE(p.peer_read_bw_cache, defaults.peer_read_bw_cache);
  }
}

TEST(Tuning, BestOfTwoProbesTakesFasterFiguresAndTheNewShape) {
  algo::CostParams a, b;
  a.copy_bw_mem = 100;
  b.copy_bw_mem = 50;
  a.sync_us = 0.5;
  b.sync_us = 0.2;
  a.peer_read_bw = 10;
  b.peer_read_bw = 20;
  a.peer_read_bw_cache = 40;
  b.peer_read_bw_cache = 30;
  a.stage_bw = 9000;
  b.stage_bw = 4000;
  a.exchange_bw = 2000;
  a.switch_us = 1.4;
  a.ring_bw = 15000;
  b.ring_bw = 7000;
  b.switch_us = 9;
  b.exchange_bw = 13000;
  a.net_measured = true;
  a.net_bw = 3000;
  a.net_sync_us = 9;
  b.cpus = 4;
  b.cache_bytes = 512 << 10;
  const algo::CostParams m = best_of(a, b);
  EXPECT_DOUBLE_EQ(m.copy_bw_mem, 100);
  EXPECT_DOUBLE_EQ(m.sync_us, 0.2);
  EXPECT_DOUBLE_EQ(m.peer_read_bw, 20);
  EXPECT_DOUBLE_EQ(m.peer_read_bw_cache, 40);
  EXPECT_DOUBLE_EQ(m.stage_bw, 9000);
  EXPECT_DOUBLE_EQ(m.exchange_bw, 13000);
  EXPECT_DOUBLE_EQ(m.switch_us, 1.4);
  EXPECT_DOUBLE_EQ(m.ring_bw, 15000);
  EXPECT_TRUE(m.net_measured);  // only the earlier probe reached loopback TCP
  EXPECT_DOUBLE_EQ(m.net_bw, 3000);
  EXPECT_DOUBLE_EQ(m.net_sync_us, 9);
  EXPECT_EQ(m.cpus, 4);
  EXPECT_DOUBLE_EQ(m.cache_bytes, 512 << 10);
}

// An entry an older probe wrote (another revision of its methods, or none recorded) is
// measured again from scratch, not merged, and rewritten with this revision.
TEST(Tuning, EntryOfAnotherProbeRevisionIsMeasuredAgain) {
  for (int probe : {0, kProbeRevision - 1, kProbeRevision + 1}) {
    TempDir d;
    const std::string f = d.path + "/tuning.json";
    write(f, file_with(params_json(123), "", "true", probe));
    auto t = local_tuning(f, "");
    ASSERT_TRUE(t.has_value()) << t.status().to_string();
    EXPECT_TRUE(t->cost.measured) << probe;
    EXPECT_LT(t->cost.sync_us, 123) << probe;
    const std::string now = read(f);
    EXPECT_NE(now.find("\"probe\": " + std::to_string(kProbeRevision)), std::string::npos) << now;
  }
}

TEST(Tuning, MissingOrCorruptFileIsMeasuredAndWritten) {
  for (const char* content : {"", "{corrupt", "{\"version\": 7}"}) {
    TempDir d;
    const std::string f = d.path + "/sub/tuning.json";
    if (*content) {
      std::filesystem::create_directories(d.path + "/sub");
      write(f, content);
    }
    auto t = local_tuning(f, "");
    ASSERT_TRUE(t.has_value()) << t.status().to_string();
    EXPECT_TRUE(t->cost.measured) << content;
    EXPECT_GT(t->cost.copy_bw_mem, 0);
    // Loopback TCP works here: the message hand-off and stream rate are measured too.
    EXPECT_TRUE(t->cost.net_measured) << content;
    EXPECT_GT(t->cost.net_sync_us, 0);
    EXPECT_GT(t->cost.net_bw, 0);
    const std::string now = read(f);
    EXPECT_NE(now.find(host_key()), std::string::npos) << now;
    EXPECT_NE(now.find("probe_ms"), std::string::npos) << now;
  }
}

TEST(Tuning, TableFromFileAndFromTuningFile) {
  TempDir d;
  const std::string table = d.path + "/table.json";
  write(table, R"({"version": 1, "table": [
      {"op": "all_reduce", "ranks": 2, "lo": 0, "hi": 1024, "algo": "ring"},
      {"op": "all_reduce", "ranks": 2, "lo": 1024, "hi": null, "algo": "shm_direct"}]})");
  const std::string f = d.path + "/tuning.json";
  write(f, file_with(params_json(1)));
  auto t = local_tuning(f, table);
  ASSERT_TRUE(t.has_value()) << t.status().to_string();
  ASSERT_EQ(t->table.size(), 2u);
  EXPECT_EQ(t->table[0].algo, "ring");
  EXPECT_EQ(t->table[1].hi, UINT64_MAX);
  const std::string f2 = d.path + "/tuning2.json";
  write(f2, file_with(params_json(1),
                      R"(, "table": [{"op": "broadcast", "ranks": 3, "lo": 8, "algo": "tree"}])"));
  auto t2 = local_tuning(f2, "");
  ASSERT_TRUE(t2.has_value());
  ASSERT_EQ(t2->table.size(), 1u);
  EXPECT_EQ(t2->table[0].kind, "broadcast");
  EXPECT_EQ(t2->table[0].nranks, 3);
  // A table named explicitly must be readable and well-formed.
  auto missing = local_tuning(f, d.path + "/absent.json");
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.status().message().find("CHORUS_TUNING_TABLE"), std::string::npos);
  write(d.path + "/bad.json", R"({"table": [{"op": "all_reduce"}]})");
  auto bad = local_tuning(f, d.path + "/bad.json");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.status().message().find("lacks"), std::string::npos);
}

TEST(Tuning, TextRoundTrip) {
  Tuning t;
  t.cost.sync_us = 0.5;
  t.table = {{"all_reduce", 4, 0, 4096, "shm"}, {"all_to_all", 2, 64, UINT64_MAX, "single_copy"}};
  Tuning u;
  ASSERT_TRUE(from_text(to_text(t), u));
  EXPECT_EQ(to_text(u), to_text(t));
  EXPECT_FALSE(from_text("nonsense", u));
}

// Ranks with different files (as on different hosts) all use rank 0's tuning.
TEST(Tuning, EveryRankGetsRankZeros) {
  TempDir d;
  write(d.path + "/a.json", file_with(params_json(11)));
  write(d.path + "/b.json", file_with(params_json(22)));
  auto store = bootstrap::open_file_store(d.path + "/store");
  ASSERT_TRUE(store.has_value());
  const Deadline dl = Deadline::after(std::chrono::seconds(20));
  Result<Tuning> r1 = Status(ErrorCode::kInternal, "not run");
  std::thread other([&] { r1 = agree_tuning(1, 2, **store, d.path + "/b.json", "", dl); });
  Result<Tuning> r0 = agree_tuning(0, 2, **store, d.path + "/a.json", "", dl);
  other.join();
  ASSERT_TRUE(r0.has_value() && r1.has_value());
  EXPECT_DOUBLE_EQ(r0->cost.sync_us, 11);
  EXPECT_DOUBLE_EQ(r1->cost.sync_us, 11);
}

// A probe due (no quiet entry): rank 0 probes only once the other rank waits for the
// tuning, here 0.5 s late; with a quiet entry it publishes at once.
TEST(Tuning, RankZeroProbesOnlyOnceTheOthersWait) {
  for (bool quiet : {false, true}) {
    TempDir d;
    write(d.path + "/t.json", file_with(params_json(11), "", quiet ? "true" : "false"));
    auto store = bootstrap::open_file_store(d.path + "/store");
    ASSERT_TRUE(store.has_value());
    const Deadline dl = Deadline::after(std::chrono::seconds(20));
    using Clock = std::chrono::steady_clock;
    Clock::time_point entered, published;
    Result<Tuning> r1 = Status(ErrorCode::kInternal, "not run");
    std::thread other([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      entered = Clock::now();
      r1 = agree_tuning(1, 2, **store, d.path + "/t.json", "", dl);
    });
    // A fresh process's view: the file path is new to local_tuning's per-process map.
    Result<Tuning> r0 = agree_tuning(0, 2, **store, d.path + "/t.json", "", dl);
    published = Clock::now();
    other.join();
    ASSERT_TRUE(r0.has_value() && r1.has_value()) << quiet;
    EXPECT_EQ(published > entered, !quiet) << quiet;
    EXPECT_EQ(r0->cost.measured, !quiet) << quiet;  // provisional: probed again
  }
}

// Rank 0's error reaches the others instead of leaving them waiting.
TEST(Tuning, RankZerosErrorReachesOthers) {
  TempDir d;
  auto store = bootstrap::open_file_store(d.path + "/store");
  ASSERT_TRUE(store.has_value());
  const Deadline dl = Deadline::after(std::chrono::seconds(20));
  Result<Tuning> r1 = Status(ErrorCode::kInternal, "not run");
  std::thread other([&] { r1 = agree_tuning(1, 2, **store, "none", "", dl); });
  Result<Tuning> r0 = agree_tuning(0, 2, **store, "none", d.path + "/absent.json", dl);
  other.join();
  ASSERT_FALSE(r0.has_value());
  ASSERT_FALSE(r1.has_value());
  EXPECT_EQ(r1.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r1.status().message().find("rank 0"), std::string::npos);
}

}  // namespace
}  // namespace chorus::core
