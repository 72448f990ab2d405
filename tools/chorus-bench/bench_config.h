// chorus-bench's command line (nccl-tests flags) and its parsed form.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "chorus/types.h"
#include "collective.h"

namespace chorus_bench {

struct BenchConfig {
  std::size_t min_bytes = 8;
  std::size_t max_bytes = 16 << 20;
  std::size_t step_factor = 2;
  int iters = 20;
  int warmup_iters = 5;
  bool check = true;
  chorus::ReduceOp op = chorus::ReduceOp::kSum;
  chorus::DataType dtype = chorus::DataType::kFloat32;
  int root = 0;
  std::vector<Coll> colls{Coll::kAllReduce};
  std::string json_path;  // empty: no JSON
  std::string algo;       // Options::algo
  bool stats = false;     // --stats: Options::stats, rank 0 prints Communicator::stats_text()
  std::string stats_json; // --stats-json: rank 0 writes its statistics rows here
  bool estimate = false;  // --estimate: print Communicator::estimate next to each row
  bool registered = false;  // -R, --registered: buffers from chorus::mem_alloc
  // --sync: a barrier before every timed iteration; an iteration's time is from the
  // barrier's exit to the last rank's completion (each iteration timed on its own, not
  // back to back), so fastest/slowest are those of single operations.
  bool sync = false;
};

// Parses argv into `cfg`. Returns -1 to go on, else the exit code (0 after --help,
// 2 for usage errors, with the message printed on stderr).
int parse_args(int argc, char** argv, BenchConfig* cfg);

}  // namespace chorus_bench
