// Reduction kernel throughput per dtype x op, next to memcpy of the same bytes, in GB/s of
// output. Run: build/bench/chorus_kernels_bench --benchmark_filter=Float32
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "chorus/types.h"
#include "kernels/reduce.h"

namespace {

using chorus::DataType;
using chorus::ReduceOp;

constexpr std::size_t kBytes = 8 << 20;  // larger than L2, like a gradient bucket

void BM_Memcpy(benchmark::State& state) {
  std::vector<unsigned char> a(kBytes, 1), dst(kBytes);
  for (auto _ : state) {
    std::memcpy(dst.data(), a.data(), kBytes);
    benchmark::DoNotOptimize(dst.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * kBytes);
}
BENCHMARK(BM_Memcpy);

void BM_Reduce(benchmark::State& state, DataType dtype, ReduceOp op, std::size_t elem) {
  const std::size_t count = kBytes / elem;
  std::vector<unsigned char> a(kBytes, 1), b(kBytes, 1), dst(kBytes);
  for (auto _ : state) {
    chorus::kernels::reduce(dst.data(), a.data(), b.data(), count, dtype, op);
    benchmark::DoNotOptimize(dst.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * kBytes);
}

BENCHMARK_CAPTURE(BM_Reduce, Float32Sum, DataType::kFloat32, ReduceOp::kSum, 4);
BENCHMARK_CAPTURE(BM_Reduce, Float32Max, DataType::kFloat32, ReduceOp::kMax, 4);
BENCHMARK_CAPTURE(BM_Reduce, Float64Sum, DataType::kFloat64, ReduceOp::kSum, 8);
BENCHMARK_CAPTURE(BM_Reduce, Float16Sum, DataType::kFloat16, ReduceOp::kSum, 2);
BENCHMARK_CAPTURE(BM_Reduce, Bfloat16Sum, DataType::kBfloat16, ReduceOp::kSum, 2);
BENCHMARK_CAPTURE(BM_Reduce, Int32Sum, DataType::kInt32, ReduceOp::kSum, 4);
BENCHMARK_CAPTURE(BM_Reduce, Int64Prod, DataType::kInt64, ReduceOp::kProd, 8);
BENCHMARK_CAPTURE(BM_Reduce, Int8Min, DataType::kInt8, ReduceOp::kMin, 1);

}  // namespace

BENCHMARK_MAIN();
