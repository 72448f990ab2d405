// Shared part of the peer benchmarks (Open MPI, Gloo) of the comparison harness: options,
// buffer shapes, exact check values and the timing loop, with chorus-bench's conventions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace compare {

// The collectives both peers implement, named as chorus-bench names them.
enum class Op { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kAllToAll };

const char* op_name(Op op);

// Command-line options (nccl-tests flag names); every element is float32, every sum exact.
struct Config {
  std::size_t min_bytes = 8;
  std::size_t max_bytes = 16u << 20;
  std::size_t step_factor = 2;
  int iters = 20;
  int warmup_iters = 5;
  bool check = true;
  int root = 0;
  std::vector<Op> ops{Op::kAllReduce};
  std::string json_path;   // rank 0 writes every row here (a JSON array) when set
  std::string store_path;  // rendezvous directory (Gloo's FileStore); unused by MPI
  bool sync = false;       // --sync: a barrier before every timed iteration (chorus-bench --sync)
};

// Parses argv; returns -1 to go on, else the exit status (0 for --help, 2 for bad usage).
int parse_args(int argc, char** argv, const char* prog, Config* cfg);

// Element counts of one row. `bytes` is chorus-bench's size: the whole buffer, which
// all_gather, reduce_scatter and all_to_all split in `nranks` blocks of `count`.
struct Shape {
  std::size_t count = 0;      // the count argument of the call (per-rank block when split)
  std::size_t elems = 0;      // elements the size stands for (count, or count * nranks)
  std::size_t in_elems = 0;   // send buffer
  std::size_t out_elems = 0;  // receive buffer
};

Shape shape_for(Op op, std::size_t bytes, int nranks);

// nccl-tests bus-bandwidth factor: 2(n-1)/n all_reduce, (n-1)/n split ops, 1 broadcast.
double busbw_factor(Op op, int nranks);

// One system's side of a measurement. Implementations make the one call per `run` and
// keep any per-shape setup in `prepare` (outside the timed loop).
class Peer {
 public:
  virtual ~Peer() = default;
  virtual const char* name() const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual void prepare(Op op, const Shape& shape, float* send, float* recv) = 0;
  virtual void run(Op op, const Shape& shape, float* send, float* recv) = 0;
  // Where this rank's result lies after `run` (recv unless the call works in place).
  virtual const float* result(Op op, const float* send, const float* recv) const = 0;
  virtual void barrier() = 0;
  virtual double max_over_ranks(double value) = 0;
  virtual std::int64_t sum_over_ranks(std::int64_t value) = 0;
};

// Runs every op x size of `cfg` on `peer`; rank 0 prints a table and writes the JSON.
// Returns the exit status: 0 when every check passed, 1 otherwise.
int run_bench(Peer& peer, const Config& cfg);

}  // namespace compare
