// FlightRecorder: a fixed-size ring of the last N operations of one communicator
// (identity, bytes, algorithm, state, timestamps, error) and its versioned text dump.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "util/spin_lock.h"

namespace chorus::diag {

// The dump format's version; bump on any change to docs/DIAGNOSTICS.md's description.
inline constexpr int kFlightRecordVersion = 1;
// The JSON dump's schema name and version (docs/DIAGNOSTICS.md, "JSON dump").
inline constexpr const char* kFlightRecordJsonSchema = "chorus.flight_record";
inline constexpr int kFlightRecordJsonVersion = 1;

enum class OpState : std::uint8_t { kIssued, kStarted, kDone, kFailed };
const char* to_string(OpState s);

// What identifies one operation. Every const char* must point to static storage
// (string literals, to_string() tables): the hot path copies pointers, never text.
struct OpIdentity {
  std::uint64_t seq = 0;       // collective seq, or the per-peer seq of a send/recv
  const char* name = "";       // "all_reduce", "agree", "send", ...
  const char* dtype = "";      // "" when not applicable
  const char* redop = "";      // "" when not applicable
  std::size_t count = 0;
  int root = -1;               // -1 when not applicable
  int peer = -1;               // send/recv peer, else -1
  std::size_t bytes = 0;
  // The stream it runs on, as one token. The one exception to static storage: it may
  // point into the communicator's stream table, which outlives its recorder.
  const char* stream = "default";
};

struct FlightEntry {
  std::uint64_t id = 0;        // record id (0 = empty slot); ids count from 1
  OpIdentity op;
  const char* algo = "";
  OpState state = OpState::kIssued;
  std::int64_t issue_ns = 0;   // steady clock
  std::int64_t start_ns = 0;   // steady clock, 0 = not started
  std::int64_t end_ns = 0;     // steady clock, 0 = not ended
  std::int64_t issue_wall_ns = 0;  // system clock (wall) at issue
  std::string error;           // set when failed
};

// Last completed and current operation (survives ring wrap-around).
struct FlightSummary {
  std::int64_t done_seq = -1;  // -1 = none completed
  const char* done_name = "";
  int done_peer = -1;          // send/recv peer of the last completed op
  std::int64_t cur_seq = -1;   // -1 = nothing in flight or failed
  const char* cur_name = "";
  int cur_peer = -1;
  OpState cur_state = OpState::kIssued;
};

// Clocks and time text shared by the dumps.
std::int64_t steady_now_ns();
std::int64_t wall_now_ns();
// The steady clock as of the kernel's last tick (CLOCK_MONOTONIC_COARSE, the same origin,
// 1-4 ms behind at most): ~4 ns to read against ~30 ns for steady_now_ns() on a VM. The
// flight recorder's times and the deadlines of operations use it.
std::int64_t tick_now_ns();

// Thread-safe; one spin lock per recorder, held for a few stores per call. Capacity 0
// disables the ring (the summary is still kept).
class FlightRecorder {
 public:
  FlightRecorder(std::size_t capacity, std::uint32_t comm, int rank, int size);

  // Records a new operation; returns its record id for the calls below. Times are
  // tick_now_ns() readings (`now_ns`: one the caller has just taken); the wall-clock time
  // is derived from it. Durations in the dumps are good to a tick (1-4 ms). With
  // `started_algo`, the operation starts as it is issued, running that algorithm (the
  // same as start(id, started_algo, now_ns) next, in one update).
  std::uint64_t issue(const OpIdentity& op, std::int64_t now_ns = tick_now_ns(),
                      const char* started_algo = nullptr);
  void start(std::uint64_t id, const char* algo, std::int64_t now_ns = tick_now_ns());
  void done(std::uint64_t id);
  void failed(std::uint64_t id, const std::string& error);

  // Entries still in the ring, oldest first.
  std::vector<FlightEntry> snapshot() const;
  FlightSummary summary() const;
  std::size_t capacity() const { return ring_.size(); }

  // The versioned text dump (docs/DIAGNOSTICS.md, "Flight recorder"); `reason` says
  // why it was taken ("api", "sigusr1", "failure").
  std::string dump(const char* reason) const;
  // The same as one JSON object on one line (flight_record_json.cc; schema
  // kFlightRecordJsonSchema, version kFlightRecordJsonVersion), newline-terminated.
  std::string dump_json(const char* reason) const;

 private:
  FlightEntry* slot(std::uint64_t id);  // nullptr once overwritten; REQUIRES mu_
  void end(std::uint64_t id, OpState state, const std::string* error);

  std::uint64_t recorded() const;  // operations ever recorded

  const std::uint32_t comm_;
  const int rank_;
  const int size_;
  mutable util::SpinLock mu_;
  std::vector<FlightEntry> ring_;
  std::uint64_t next_id_ = 1;
  FlightSummary summary_;
  std::uint64_t cur_id_ = 0;  // the summary's current operation
  const std::int64_t wall_minus_steady_;  // at construction: wall time = tick time + this
};

// "host" part of the dump header and hang reports (gethostname).
std::string this_host();
// "2024-05-01T12:00:00.123456Z" (UTC, microseconds) for a system-clock time in ns.
std::string iso_time(std::int64_t wall_ns);
// Microseconds from issue to start, and from start to end (or to `now` while running).
std::int64_t wait_us(const FlightEntry& e, std::int64_t now);
std::int64_t run_us(const FlightEntry& e, std::int64_t now);

}  // namespace chorus::diag
