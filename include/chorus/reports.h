// What a communicator reports about itself without running a collective:
// Communicator::health_check()'s HealthReport and Communicator::estimate()'s Estimate.
#pragma once
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "chorus/status.h"

namespace chorus {

// What Communicator::health_check() found. Never thrown: a report.
struct HealthReport {
  bool ok = false;                  // every rank answered in time with the right data
  ErrorCode code = ErrorCode::kOk;  // kOk when ok; else kPeerLost, kTimeout, kAborted, ...
  std::string message;              // the error's message (names rank, peer, seq); "" when ok
  // size() when ok; on failure size() - 1 when the error names the culprit rank
  // (Error::peer_rank()), -1 when it is not known which ranks answered.
  int ranks_responding = 0;
  std::chrono::microseconds elapsed{0};  // time spent in health_check()
};

// What a communicator would run for one collective (Communicator::estimate).
struct Estimate {
  std::string algo;           // the algorithm the selector would run, e.g. "shm_direct"
  double predicted_us = -1;   // the cost model's time of it, us (-1: no formula, e.g. across hosts)
  std::string source;         // why: "override" (CHORUS_ALGO / Options::algo), "table"
                              // (tuning table), "model" (least predicted time), "rules"
  std::string rule_algo;      // what the built-in rules alone would run
  std::string model_algo;     // the model's least-time choice ("" where the model does not choose)
  // Every algorithm of the collective this communicator's transport can run, with its
  // predicted time in us (-1 where the model has no formula).
  std::vector<std::pair<std::string, double>> candidates;
};

}  // namespace chorus
