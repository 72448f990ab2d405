// The stress loop's engine: the communicators and streams of every dimension, and one
// step (issue every operation of the plan, wait, check every result).
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "chorus/communicator.h"
#include "plan.h"
#include "stress_config.h"

namespace chorus_stress {

// One finished operation of a step.
struct OpOutcome {
  std::string label;      // "tp all_reduce" (5d) or "all_reduce float32" (others)
  Kind kind;
  int nranks;             // of its communicator
  std::size_t bytes;      // op_bytes()
  double seconds;         // issue to completion
  std::optional<std::string> wrong;  // description of the first wrong element
};

class Stress {
 public:
  // Builds the dimension communicators (split of `world` per --groups) and one stream
  // per dimension. Collective over `world`. Throws chorus::Error, or std::invalid_argument
  // when --groups does not fit the world size.
  Stress(chorus::Communicator& world, const StressConfig& cfg);

  // Issues every operation of `step` (on their streams, or one after another with
  // --serial), waits for all, checks every result. Throws chorus::Error on a failed
  // operation. `desync` makes this rank issue a different first collective.
  std::vector<OpOutcome> run_step(std::int64_t step, bool desync);
  // Communication time of the last step: from its first issue to its last completion
  // (inputs are built before and results checked after it).
  double last_step_seconds() const { return last_step_seconds_; }

  // Human-readable layout, e.g. "tp: 2 ranks (sub-communicator), dp: 4 ranks (world)".
  std::string describe() const;
  // This rank's per-operation statistics of every communicator (--stats), one table each.
  std::string stats_text() const;

 private:
  chorus::Communicator& comm_of(int dim);

  chorus::Communicator& world_;
  const StressConfig& cfg_;
  std::vector<chorus::Communicator> subs_;   // sub-communicators made by split
  std::array<int, kNumDims> sub_of_{};       // index into subs_, -1 = world
  std::array<int, kNumDims> sizes_{};
  std::array<chorus::Stream, kNumDims> streams_;
  std::vector<std::vector<unsigned char>> send_, recv_;  // per op slot, reused
  double last_step_seconds_ = 0;
};

}  // namespace chorus_stress
