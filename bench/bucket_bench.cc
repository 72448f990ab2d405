// Gradient sync of a model of many mixed-size tensors, four ways, side by side in one
// run: one blocking all_reduce per tensor, one async all_reduce per tensor, the Bucketer,
// and the Bucketer with bf16 wire compression. Run under a launcher:
//   chorus-run -n 4 build/bench/chorus_bucket_bench [tensors] [iterations]
// Rank 0 prints the median time per iteration of each way and its ratio to per-tensor
// blocking calls. Every way's result is checked against the first's.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "chorus/bucketer.h"
#include "chorus/communicator.h"

namespace {

using Clock = std::chrono::steady_clock;

// Sizes like a small transformer's parameters: many biases and norms, some big matrices.
std::vector<std::size_t> model_sizes(int tensors) {
  std::vector<std::size_t> sizes;
  for (int t = 0; t < tensors; ++t) {
    const int kind = t % 8;
    sizes.push_back(kind == 0 ? 262144 : kind == 1 ? 65536 : kind < 4 ? 1024 : 256 + t);
  }
  return sizes;
}

struct Way {
  const char* name;
  std::vector<double> seconds;
};

}  // namespace

int main(int argc, char** argv) {
  const int tensors = argc > 1 ? std::atoi(argv[1]) : 200;
  const int iterations = argc > 2 ? std::atoi(argv[2]) : 10;
  if (tensors < 1 || iterations < 1) {
    std::fprintf(stderr, "usage: chorus_bucket_bench [tensors >= 1] [iterations >= 1]\n");
    return 2;
  }
  try {
    chorus::Communicator comm = chorus::Communicator::init_from_env();
    const auto sizes = model_sizes(tensors);
    std::vector<std::vector<float>> grads(sizes.size());
    auto refill = [&] {
      for (std::size_t t = 0; t < sizes.size(); ++t)
        grads[t].assign(sizes[t], static_cast<float>((comm.rank() + t) % 7));
    };
    std::vector<std::vector<float>> reference;
    chorus::Bucketer bucketed(comm);
    chorus::BucketerOptions bf16_opts;
    bf16_opts.compression = chorus::Compression::kBfloat16;
    chorus::Bucketer compressed(comm, bf16_opts);
    for (auto& g : grads) {
      bucketed.add(g.data(), g.size(), chorus::DataType::kFloat32);
      compressed.add(g.data(), g.size(), chorus::DataType::kFloat32);
    }
    Way ways[] = {{"per-tensor blocking", {}}, {"per-tensor async", {}},
                  {"bucketed 25 MiB", {}}, {"bucketed bf16", {}}};
    bool wrong = false;
    for (int it = 0; it < iterations + 1; ++it) {  // iteration 0 warms up
      for (int w = 0; w < 4; ++w) {
        refill();
        comm.barrier();
        const auto start = Clock::now();
        if (w == 0) {
          for (auto& g : grads)
            comm.all_reduce(g.data(), g.data(), g.size(), chorus::DataType::kFloat32,
                            chorus::ReduceOp::kSum);
        } else if (w == 1) {
          std::vector<chorus::Work> works;
          for (auto& g : grads)
            works.push_back(comm.all_reduce_async(g.data(), g.data(), g.size(),
                                                  chorus::DataType::kFloat32,
                                                  chorus::ReduceOp::kSum));
          for (auto& work : works) work.wait();
        } else {
          chorus::Bucketer& b = w == 2 ? bucketed : compressed;
          for (std::size_t t = grads.size(); t-- > 0;) b.mark_ready(t);
          b.finish();
        }
        const double s = std::chrono::duration<double>(Clock::now() - start).count();
        if (it > 0) ways[w].seconds.push_back(s);
        if (w == 0) reference = grads;
        else wrong |= grads != reference;  // small integers: exact in bf16 too
      }
    }
    if (comm.rank() == 0) {
      double bytes = 0;
      for (std::size_t s : sizes) bytes += 4.0 * static_cast<double>(s);
      std::printf("# %d ranks, %d tensors, %.1f MiB of float32, median of %d iterations\n",
                  comm.size(), tensors, bytes / (1 << 20), iterations);
      std::printf("%-22s %12s %10s\n", "# way", "time(ms)", "speedup");
      double base = 0;
      for (Way& w : ways) {
        std::sort(w.seconds.begin(), w.seconds.end());
        const double median = w.seconds[w.seconds.size() / 2];
        if (base == 0) base = median;
        std::printf("%-22s %12.3f %9.2fx\n", w.name, median * 1e3, base / median);
      }
      std::printf("# results %s\n", wrong ? "WRONG" : "identical in every way");
    }
    comm.barrier();
    return wrong ? 1 : 0;
  } catch (const chorus::Error& e) {
    std::fprintf(stderr, "chorus_bucket_bench: %s\n", e.what());
    return 1;
  }
}
