// mpi_bench: the comparison harness's Open MPI peer. Times MPI_Allreduce, MPI_Allgather,
// MPI_Reduce_scatter_block, MPI_Bcast and MPI_Alltoall on float32 buffers with
// chorus-bench's sizes and checks every result exactly. Run under mpirun.
#include <mpi.h>

#include <cstdio>

#include "peer_bench.h"

namespace {

using compare::Op;
using compare::Shape;

class MpiPeer : public compare::Peer {
 public:
  explicit MpiPeer(int root) : root_(root) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  const char* name() const override { return "mpi"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void prepare(Op, const Shape&, float*, float*) override {}

  void run(Op op, const Shape& s, float* send, float* recv) override {
    int count = static_cast<int>(s.count);
    switch (op) {
      case Op::kAllReduce:
        MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        return;
      case Op::kAllGather:
        MPI_Allgather(send, count, MPI_FLOAT, recv, count, MPI_FLOAT, MPI_COMM_WORLD);
        return;
      case Op::kReduceScatter:
        MPI_Reduce_scatter_block(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        return;
      case Op::kBroadcast:  // one buffer per rank: the root's input, the others' output
        MPI_Bcast(rank_ == root_ ? send : recv, count, MPI_FLOAT, root_, MPI_COMM_WORLD);
        return;
      case Op::kAllToAll:
        MPI_Alltoall(send, count, MPI_FLOAT, recv, count, MPI_FLOAT, MPI_COMM_WORLD);
        return;
    }
  }

  const float* result(Op op, const float* send, const float* recv) const override {
    return op == Op::kBroadcast && rank_ == root_ ? send : recv;
  }
  void barrier() override { MPI_Barrier(MPI_COMM_WORLD); }
  double max_over_ranks(double value) override {
    double out = 0;
    MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return out;
  }
  std::int64_t sum_over_ranks(std::int64_t value) override {
    std::int64_t out = 0;
    MPI_Allreduce(&value, &out, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    return out;
  }
 private:
  int root_, rank_ = 0, size_ = 1;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  compare::Config cfg;
  int rc = compare::parse_args(argc, argv, "mpi_bench", &cfg);
  if (rc < 0) {
    MpiPeer peer(cfg.root);
    rc = compare::run_bench(peer, cfg);
  }
  MPI_Finalize();
  return rc;
}
