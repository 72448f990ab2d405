// Gradient sync of a model of many mixed-size tensors, four ways, side by side in one
// run: one blocking all_reduce per tensor, one async all_reduce per tensor, and the
// Bucketer with 25, 4 and 1 MiB buckets and with bf16 wire compression. Run under a launcher:
//   chorus-run -n 4 build/bench/chorus_bucket_bench [tensors] [iterations]
// Rank 0 prints the median time per iteration of each way and its ratio to per-tensor
// blocking calls. Every way's result is checked against the first's.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
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
    for (std::size_t t = 0; t < sizes.size(); ++t) grads[t].resize(sizes[t]);
    // Refills in place: the Bucketers hold the tensors' addresses.
    auto refill = [&] {
      for (std::size_t t = 0; t < sizes.size(); ++t)
        std::fill(grads[t].begin(), grads[t].end(), static_cast<float>((comm.rank() + t) % 7));
    };
    std::vector<std::vector<float>> reference;
    // Bucketers: DDP's 25 MiB, smaller buckets (cache-sized on a CPU), and bf16 wire
    // compression.
    struct Config {
      const char* name;
      std::size_t bytes;
      chorus::Compression compression;
    };
    const Config configs[] = {{"bucketed 25 MiB", 25u << 20, chorus::Compression::kNone},
                              {"bucketed 4 MiB", 4u << 20, chorus::Compression::kNone},
                              {"bucketed 1 MiB", 1u << 20, chorus::Compression::kNone},
                              {"bucketed 4 MiB bf16", 4u << 20, chorus::Compression::kBfloat16}};
    std::vector<std::unique_ptr<chorus::Bucketer>> bucketers;
    std::vector<Way> ways = {{"per-tensor blocking", {}}, {"per-tensor async", {}}};
    for (const Config& c : configs) {
      chorus::BucketerOptions opts;
      opts.bucket_bytes = c.bytes;
      opts.compression = c.compression;
      bucketers.push_back(std::make_unique<chorus::Bucketer>(comm, opts));
      for (auto& g : grads) bucketers.back()->add(g.data(), g.size(), chorus::DataType::kFloat32);
      ways.push_back({c.name, {}});
    }
    bool wrong = false;
    for (int it = 0; it < iterations + 1; ++it) {  // iteration 0 warms up
      for (std::size_t w = 0; w < ways.size(); ++w) {
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
          chorus::Bucketer& b = *bucketers[w - 2];
          for (std::size_t t = grads.size(); t-- > 0;) b.mark_ready(t);
          b.finish();
        }
        const double s = std::chrono::duration<double>(Clock::now() - start).count();
        if (it > 0) ways[w].seconds.push_back(s);
        if (w == 0) reference = grads;
        else if (grads != reference) wrong = true;  // small integers: exact in bf16 too
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
