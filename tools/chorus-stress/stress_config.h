// chorus-stress's command line and its parsed form.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace chorus_stress {

// The collectives the stress patterns issue.
enum class Kind { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kBroadcast };
inline constexpr int kNumKinds = 5;
const char* kind_name(Kind k);
std::optional<Kind> parse_kind(std::string_view name);

enum class Pattern {
  k5d,      // tp all_reduce, dp all_reduce, ep all_to_all, sp all_gather, pp all_gather
  kRandom,  // random ops, sizes, dtypes and streams from a seed shared by all ranks
  kSingle,  // one collective per step (--pattern all_reduce, ...)
};

// The five dimensions of the 5d pattern; each has its own stream (and, with --groups,
// its own sub-communicator). Random patterns use them as stream slots.
inline constexpr int kNumDims = 5;
inline constexpr const char* kDimNames[kNumDims] = {"tp", "dp", "ep", "sp", "pp"};
int dim_index(std::string_view name);  // -1 when unknown

// A fault to inject for demonstrations and tests: at the start of step `step`, rank
// `rank` exits normally, is killed (SIGKILL), stalls forever, or issues a different
// collective than the others.
struct Injection {
  enum class What { kExit, kKill, kStall, kDesync };
  What what;
  int rank;
  std::int64_t step;
};
std::optional<Injection> parse_injection(const std::string& text);  // "kill@2:10"

// --delay: rank `rank` sleeps `delay` before issuing each step (a straggler on purpose).
struct Delay {
  int rank;
  std::chrono::microseconds delay;
};
std::optional<Delay> parse_delay(const std::string& text);  // "2:5ms"

// --groups: dimension sizes, first listed varies fastest over the ranks; size 0 = "rest"
// (the world size divided by the product of the others).
struct GroupSpec {
  int dim;
  int size;
};
// "tp=2,dp=rest". nullopt on syntax errors, unknown or repeated dimensions, or more
// than one "rest".
std::optional<std::vector<GroupSpec>> parse_groups(const std::string& text);

struct StressConfig {
  Pattern pattern = Pattern::k5d;
  Kind single = Kind::kAllReduce;                // for Pattern::kSingle
  std::size_t size_bytes = 4 << 20;              // bytes per operation (nccl-tests size)
  std::int64_t steps = 0;                        // 0 = no step limit
  std::chrono::milliseconds duration{0};         // 0 = no time limit
  std::chrono::milliseconds log_interval{10000};
  std::chrono::milliseconds timeout{0};          // Options::timeout; 0 = CHORUS_TIMEOUT
  std::uint64_t seed = 1;
  bool serial = false;                           // blocking calls one after another
  bool unsafe_local_deadline = false;            // the naive per-rank deadline loop
  std::chrono::milliseconds deadline_skew{0};    // unsafe mode: rank r stops r*skew later
  std::vector<GroupSpec> groups;
  std::vector<Injection> injections;
  std::vector<Delay> delays;
  bool stats = false;                            // collect and print per-op statistics
  std::string json_path;                         // rank 0 writes the summary here
};

// Parses argv into `cfg`. Returns -1 to go on, else the exit code (0 after --help,
// 2 for usage errors, with the message printed on stderr).
int parse_args(int argc, char** argv, StressConfig* cfg);

}  // namespace chorus_stress
