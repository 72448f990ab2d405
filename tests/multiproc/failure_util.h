// Helpers shared by the failure tests: cross-process timestamps (CLOCK_MONOTONIC is one
// clock for every process of the host) and checks on the error a rank caught.
#pragma once
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <cstdint>
#include <string>
#include <vector>

#include "chorus/chorus.h"
#include "rank_runner.h"

namespace chorus::testing {

using FailClock = std::chrono::steady_clock;

// These tests run on the transport CHORUS_TRANSPORT selects (auto, the default, is shm on
// one host; CTest runs them again with tcp): both must give the same failure semantics.

// Records "now" under `name` in the run's temp dir (call right before leaving/dying).
inline void stamp(const std::string& name) {
  std::ofstream(this_rank().temp_dir + "/" + name)
      << FailClock::now().time_since_epoch().count();
}

// Seconds since the stamp `name` (a huge value when it is missing).
inline double seconds_since_stamp(const std::string& name) {
  std::ifstream in(this_rank().temp_dir + "/" + name);
  long long ns = 0;
  if (!(in >> ns)) return 1e9;
  auto then = FailClock::time_point(FailClock::duration(ns));
  return std::chrono::duration<double>(FailClock::now() - then).count();
}

inline bool has(const Error& e, const std::string& s) {
  return e.message().find(s) != std::string::npos;
}

// The error names peer rank `peer` with its address: "peer rank P (127.0.0.1:port" over
// TCP, "peer rank P (pid N on host" over shm.
inline bool names_peer_address(const Error& e, int peer) {
  const std::string p = "peer rank " + std::to_string(peer) + " (";
  return has(e, p + "127.0.0.1:") || has(e, p + "pid ");
}

// The error names this rank as the one that failed, and the sequence number it was in.
inline void check_names_rank_and_seq(const Error& e, int rank) {
  check(has(e, "rank " + std::to_string(rank) + " in ") ||
            has(e, "rank " + std::to_string(rank) + ": "),
        std::string("error does not name this rank: ") + e.what());
  check(e.seq() >= 0 && has(e, "seq " + std::to_string(e.seq())),
        std::string("error does not name its seq: ") + e.what());
}

// A short operation deadline: a hang shows as kTimeout, not as a test that runs out its
// own time.
inline RunOptions short_timeout(std::chrono::milliseconds timeout) {
  RunOptions o;
  o.options.timeout = timeout;
  return o;
}

// Every element of `v` is `want`.
inline void expect_all(const std::vector<std::int32_t>& v, std::int32_t want,
                       const std::string& what) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (v[i] != want)
      check(false, what + ": element " + std::to_string(i) + " is " + std::to_string(v[i]) +
                       ", expected " + std::to_string(want));
}

}  // namespace chorus::testing
