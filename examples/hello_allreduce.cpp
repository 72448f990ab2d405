// hello_allreduce: the smallest Chorus program. Every rank contributes (rank + 1) to
// each element; rank 0 prints the sum. Run with: chorus-run -n 4 ./hello_allreduce
#include <chorus/chorus.h>

#include <cstdio>
#include <span>
#include <vector>

int main() {
  try {
    chorus::Communicator comm = chorus::Communicator::init_from_env();
    std::vector<float> data(4, static_cast<float>(comm.rank() + 1));
    comm.all_reduce(std::span<float>(data), chorus::ReduceOp::kSum);
    if (comm.rank() == 0) {
      // With n ranks every element is 1 + 2 + ... + n = n(n+1)/2.
      std::printf("all_reduce over %d ranks:", comm.size());
      for (float v : data) std::printf(" %g", v);
      std::printf("\n");
    }
    comm.barrier();
  } catch (const chorus::Error& e) {
    std::fprintf(stderr, "hello_allreduce: %s\n", e.what());
    return 1;
  }
  return 0;
}
