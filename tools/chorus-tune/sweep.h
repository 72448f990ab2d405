// The sweep: per collective and size, every algorithm the communicator can run, forced
// one at a time (Options::algo), interleaved round by round; each call timed.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "chorus/communicator.h"
#include "tune_config.h"

namespace chorus_tune {

struct AlgoTime {
  std::string algo;
  double us = 0;            // measured: the slowest rank's median batch, per call (us)
  double predicted_us = -1;  // the cost model's figure (Communicator::estimate)
};

// One (collective, ranks, size) cell.
struct Cell {
  std::string op;
  int ranks = 0;
  std::size_t bytes = 0;      // reported size (nccl-tests convention, as chorus-bench)
  std::size_t sel_bytes = 0;  // count x dtype size: what the selector and the table see
  std::vector<AlgoTime> times;
  std::string best;
  double best_us = 0;
  std::string chosen, source;  // the default choice and why (Estimate)
  std::string rule_algo, model_algo;
  // Loss (%) of running `algo` instead of the best; -1 when `algo` was not measured.
  double loss(const std::string& algo) const;
};

// Runs the sweep (every rank; collective calls in the same order everywhere).
std::vector<Cell> sweep(chorus::Communicator& comm, const TuneConfig& cfg);

}  // namespace chorus_tune
