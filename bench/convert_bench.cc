// fp32 <-> fp16 / bf16 conversion throughput per kernel level, next to memcpy, in GB/s of
// fp32 data (a narrow reads that many bytes and writes half; a widen writes that many).
// Run: build/bench/chorus_convert_bench --benchmark_filter=avx2
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "chorus/types.h"
#include "kernels/convert.h"
#include "kernels/isa.h"

namespace {

using chorus::DataType;
using chorus::kernels::Isa;

// fp32 bytes: 8 MiB (beyond L2: a gradient bucket, memory-bound) and 256 KiB (L2-resident).
constexpr std::int64_t kSizes[] = {8 << 20, 256 << 10};

std::vector<float> inputs(std::size_t n) {
  std::mt19937 rng(1);
  std::normal_distribution<float> dist(0.0f, 1e-2f);  // gradient-like magnitudes
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

void BM_Memcpy(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  std::vector<unsigned char> a(bytes, 1), dst(bytes);
  for (auto _ : state) {
    std::memcpy(dst.data(), a.data(), bytes);
    benchmark::DoNotOptimize(dst.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}

void BM_Narrow(benchmark::State& state, Isa isa, DataType to) {
  if (!chorus::kernels::cpu_supports(isa)) {
    state.SkipWithError("kernel level not supported by this CPU");
    return;
  }
  const std::size_t n = static_cast<std::size_t>(state.range(0)) / sizeof(float);
  const std::vector<float> src = inputs(n);
  std::vector<std::uint16_t> dst(n);
  for (auto _ : state) {
    chorus::kernels::narrow_f32_with(isa, to, src.data(), dst.data(), n);
    benchmark::DoNotOptimize(dst.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * n * sizeof(float)));
  state.SetLabel(chorus::kernels::isa_name(chorus::kernels::convert_isa(isa, to)));
}

void BM_Widen(benchmark::State& state, Isa isa, DataType from) {
  if (!chorus::kernels::cpu_supports(isa)) {
    state.SkipWithError("kernel level not supported by this CPU");
    return;
  }
  const std::size_t n = static_cast<std::size_t>(state.range(0)) / sizeof(float);
  const std::vector<float> f = inputs(n);
  std::vector<std::uint16_t> src(n);
  chorus::kernels::narrow_f32_with(Isa::kScalar, from, f.data(), src.data(), n);
  std::vector<float> dst(n);
  for (auto _ : state) {
    chorus::kernels::widen_to_f32_with(isa, from, src.data(), dst.data(), n);
    benchmark::DoNotOptimize(dst.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * n * sizeof(float)));
  state.SetLabel(chorus::kernels::isa_name(chorus::kernels::convert_isa(isa, from)));
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::RegisterBenchmark("BM_Memcpy", BM_Memcpy)->Arg(kSizes[0])->Arg(kSizes[1]);
  for (int l = chorus::kernels::kNumIsas - 1; l >= 0; --l) {
    const auto isa = static_cast<Isa>(l);
    const std::string level = chorus::kernels::isa_name(isa);
    for (DataType t : {DataType::kFloat16, DataType::kBfloat16}) {
      const std::string type = t == DataType::kFloat16 ? "float16" : "bfloat16";
      benchmark::RegisterBenchmark(("BM_Narrow/" + level + "/float32_to_" + type).c_str(),
                                   BM_Narrow, isa, t)
          ->Arg(kSizes[0])
          ->Arg(kSizes[1]);
      benchmark::RegisterBenchmark(("BM_Widen/" + level + "/" + type + "_to_float32").c_str(),
                                   BM_Widen, isa, t)
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
