// chorus-trace's model of CHORUS_TIMELINE files: the spans of every rank (and the levels
// of hierarchical algorithms inside them), matched across ranks into operation instances
// (same communicator, same seq).
#pragma once
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace chorus_trace {

struct Span {
  int rank = 0;          // the file's rank (the trace's pid)
  long tid = 0;          // track: communicator x stream
  std::string name;      // "all_reduce", ...
  std::string comm_key;  // identical on the communicator's members
  int comm_rank = 0, comm_size = 1;
  unsigned long long seq = 0;
  std::string stream, algo, dtype;
  double ts = 0, dur = 0;  // microseconds, aligned clock
  double queued = 0;       // issue to start (stream queue, window turn)
  double issued() const { return ts - queued; }
  double bytes = 0;
  int peer = -1;
  bool ok = true;
  double end() const { return ts + dur; }
};

// One level of a hierarchical algorithm inside an operation's span ("cat":"chorus.level").
struct LevelSpan {
  std::string op;    // the operation: "all_reduce", ...
  std::string name;  // "host reduce_scatter", "across hosts all_reduce", ...
  std::string via;   // "windows", "messages" or ""
  int level = 0;     // the phase's number in its algorithm
  double dur = 0;    // us
};

struct RankFile {
  std::string path;
  int rank = 0, size = 0;
  nlohmann::json other;                // the file's "otherData"
  nlohmann::json events;               // its traceEvents, as written
  std::vector<Span> spans;
  std::vector<LevelSpan> levels;
};

// One collective seen by all its ranks.
struct Instance {
  std::vector<const Span*> spans;  // one per member rank present
  int expected = 0;                // the communicator's size
  // Arrival = when a rank's program issued the operation.
  double first_arrival = 0, last_arrival = 0, second_arrival = 0;
  int last_rank = -1;              // the rank (file rank) that arrived last
  double last_start = 0, last_end = 0;  // latest start / end of execution
  bool complete() const { return static_cast<int>(spans.size()) == expected; }
};

// Reads one per-rank file (a file cut short by a crash is closed before parsing) or a
// merged trace (its ranks come back as separate RankFiles). Throws std::runtime_error.
std::vector<RankFile> load(const std::string& path);
// Collectives (not send/recv) grouped by (communicator key, seq).
std::vector<Instance> match(const std::vector<RankFile>& files);

}  // namespace chorus_trace
