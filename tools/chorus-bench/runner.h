// Runs one benchmark row: timing out of place and in place, then the check.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "bench_config.h"
#include "buffer.h"
#include "chorus/communicator.h"
#include "collective.h"

namespace chorus_bench {

struct ModeResult {
  double time_us = 0;       // average per iteration, max over ranks
  // The fastest and the slowest timed iteration (each rank's, then max over ranks): their
  // ratio is the run's spread.
  double min_us = 0, max_us = 0;
  double algbw = 0;         // GB/s
  double busbw = 0;         // GB/s
  std::int64_t wrong = -1;  // mismatching elements over all ranks; -1 = not checked
  // --stats: the timed iterations' mean time from Communicator::stats() (the difference
  // of its row before and after them), max over ranks; -1 = not collected.
  double stats_time_us = -1;
};

struct RowResult {
  Coll coll;
  std::size_t bytes;  // elems * element size
  std::size_t elems;
  chorus::DataType dtype;
  chorus::ReduceOp op;
  int root;
  ModeResult out_of_place;
  ModeResult in_place;
};

class Runner {
 public:
  Runner(chorus::Communicator& comm, const BenchConfig& cfg);
  // The row for `bytes`, or nullopt when it holds less than one element per rank.
  // Every rank must call it with the same arguments.
  std::optional<RowResult> run_row(Coll c, std::size_t bytes);

 private:
  ModeResult run_mode(Coll c, const Shape& shape, bool in_place);
  double max_over_ranks(double value);
  std::int64_t sum_over_ranks(std::int64_t value);
  // (count, total_us) of this rank's statistics row for collective `c` at `bytes`.
  std::pair<std::uint64_t, double> stats_row(Coll c, std::size_t bytes) const;

  chorus::Communicator& comm_;
  const BenchConfig& cfg_;
  Buffer a_;  // out-of-place send buffer
  Buffer b_;  // receive buffer (and in-place buffer)
  bool first_mode_ = true;  // no row has been warmed up yet
};

}  // namespace chorus_bench
