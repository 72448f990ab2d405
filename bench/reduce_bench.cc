// Reduction kernel throughput per kernel level x representative dtype/op, next to memcpy of the
// same bytes, in GB/s of output. Run: build/bench/chorus_kernels_bench --benchmark_filter=avx512
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "chorus/types.h"
#include "kernels/isa.h"
#include "kernels/reduce.h"

namespace {

using chorus::DataType;
using chorus::ReduceOp;
using chorus::kernels::Isa;

// Buffer sizes: 8 MiB (larger than L2, like a gradient bucket: memory-bound) and 256 KiB
// (L2-resident, like a pipelined chunk that was just received: shows the kernels' own speed).
constexpr std::int64_t kSizes[] = {8 << 20, 256 << 10};

void BM_Memcpy(benchmark::State& state) {
  const auto kBytes = static_cast<std::size_t>(state.range(0));
  std::vector<unsigned char> a(kBytes, 1), dst(kBytes);
  for (auto _ : state) {
    std::memcpy(dst.data(), a.data(), kBytes);
    benchmark::DoNotOptimize(dst.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kBytes));
}

void BM_Reduce(benchmark::State& state, Isa isa, DataType dtype, ReduceOp op) {
  if (!chorus::kernels::cpu_supports(isa)) {
    state.SkipWithError("kernel level not supported by this CPU");
    return;
  }
  const auto kBytes = static_cast<std::size_t>(state.range(0));
  const std::size_t count = kBytes / chorus::kernels::element_size(dtype);
  std::vector<unsigned char> a(kBytes, 1), b(kBytes, 1), dst(kBytes);
  for (auto _ : state) {
    chorus::kernels::reduce_with(isa, dst.data(), a.data(), b.data(), count, dtype, op);
    benchmark::DoNotOptimize(dst.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kBytes));
  // The level whose code actually ran (a lower one where `isa` has no kernel for the pair).
  state.SetLabel(chorus::kernels::isa_name(chorus::kernels::kernel_isa(isa, dtype, op)));
}

struct Case {
  const char* name;
  DataType dtype;
  ReduceOp op;
};
constexpr Case kCases[] = {
    {"float32_sum", DataType::kFloat32, ReduceOp::kSum},
    {"float32_max", DataType::kFloat32, ReduceOp::kMax},
    {"float64_sum", DataType::kFloat64, ReduceOp::kSum},
    {"float16_sum", DataType::kFloat16, ReduceOp::kSum},
    {"bfloat16_sum", DataType::kBfloat16, ReduceOp::kSum},
    {"int32_sum", DataType::kInt32, ReduceOp::kSum},
    {"int8_min", DataType::kInt8, ReduceOp::kMin},
    {"int64_prod", DataType::kInt64, ReduceOp::kProd},
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::RegisterBenchmark("BM_Memcpy", BM_Memcpy)->Arg(kSizes[0])->Arg(kSizes[1]);
  for (int l = chorus::kernels::kNumIsas - 1; l >= 0; --l) {
    const auto isa = static_cast<Isa>(l);
    for (const Case& c : kCases) {
      const std::string name =
          std::string("BM_Reduce/") + chorus::kernels::isa_name(isa) + "/" + c.name;
      benchmark::RegisterBenchmark(name.c_str(), BM_Reduce, isa, c.dtype, c.op)
          ->Arg(kSizes[0])
          ->Arg(kSizes[1]);
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
