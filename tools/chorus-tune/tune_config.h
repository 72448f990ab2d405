// Command-line settings of chorus-tune.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "collective.h"

namespace chorus_tune {

struct TuneConfig {
  std::vector<chorus_bench::Coll> colls;
  std::size_t min_bytes = 8;
  std::size_t max_bytes = 64 << 20;
  std::size_t step_factor = 8;
  int iters = 20;        // timed calls per algorithm and round
  int warmup_iters = 2;  // untimed calls per algorithm and round
  int rounds = 3;        // algorithms interleaved round by round (every call counts)
  double tolerance = 10;  // % loss that still counts as "within"
  std::string write_path;  // --write: the tuning table
};

// Parses argv; returns -1 to go on, else the exit status (0 for --help, 2 for errors).
int parse_args(int argc, char** argv, TuneConfig* cfg);

}  // namespace chorus_tune
