// A program outside the Chorus tree: all_reduce of floats, result printed on rank 0.
#include <chorus/chorus.h>

#include <cstdio>
#include <span>
#include <vector>

int main() {
  try {
    chorus::Communicator comm = chorus::Communicator::init_from_env();
    std::vector<float> data(4, static_cast<float>(comm.rank() + 1));
    comm.all_reduce(std::span<float>(data), chorus::ReduceOp::kSum);
    if (comm.rank() == 0) std::printf("sum over %d ranks: %g\n", comm.size(), data[0]);
    comm.barrier();
  } catch (const chorus::Error& e) {
    std::fprintf(stderr, "app: %s\n", e.what());
    return 1;
  }
  return 0;
}
