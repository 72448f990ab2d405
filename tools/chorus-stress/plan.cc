// The per-step operation lists of the 5d, random and single-op patterns.
#include "plan.h"

#include <algorithm>

namespace chorus_stress {

namespace {

// Elements per rank block for an op of `bytes` in total (nccl-tests convention: the
// whole buffer for all_reduce and broadcast, the gathered or scattered buffer else).
std::size_t count_for(Kind kind, std::size_t bytes, chorus::DataType dtype, int n) {
  const std::size_t elems = std::max<std::size_t>(1, bytes / chorus::dtype_size(dtype));
  if (kind == Kind::kAllReduce || kind == Kind::kBroadcast) return elems;
  return std::max<std::size_t>(1, elems / static_cast<std::size_t>(n));
}

// splitmix64: a small generator whose output is fixed by the standard arithmetic, so
// every rank derives the same random pattern from the same seed.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t below(std::uint64_t n) { return (state_ = mix(state_)) % n; }

 private:
  std::uint64_t state_;
};

constexpr chorus::DataType kRandomDtypes[] = {chorus::DataType::kFloat32,
                                              chorus::DataType::kFloat64,
                                              chorus::DataType::kInt32, chorus::DataType::kInt64,
                                              chorus::DataType::kBfloat16};

}  // namespace

BufferCounts buffer_counts(const OpSpec& op, int n) {
  const std::size_t all = op.count * static_cast<std::size_t>(n);
  switch (op.kind) {
    case Kind::kAllReduce:
    case Kind::kBroadcast: return {op.count, op.count};
    case Kind::kAllGather: return {op.count, all};
    case Kind::kReduceScatter: return {all, op.count};
    case Kind::kAllToAll: return {all, all};
  }
  return {0, 0};
}

std::size_t op_bytes(const OpSpec& op, int n) {
  const BufferCounts c = buffer_counts(op, n);
  return std::max(c.send, c.recv) * chorus::dtype_size(op.dtype);
}

double busbw_factor(Kind kind, int n) {
  if (n <= 1) return 0.0;
  const double r = static_cast<double>(n);
  switch (kind) {
    case Kind::kAllReduce: return 2.0 * (r - 1) / r;
    case Kind::kAllGather:
    case Kind::kReduceScatter:
    case Kind::kAllToAll: return (r - 1) / r;
    case Kind::kBroadcast: return 1.0;
  }
  return 0.0;
}

std::vector<OpSpec> plan_step(const StressConfig& cfg, std::int64_t step,
                              const std::array<int, kNumDims>& dim_sizes) {
  const auto f32 = chorus::DataType::kFloat32;
  std::vector<OpSpec> ops;
  auto add = [&](Kind kind, int dim, std::size_t bytes, chorus::DataType dtype, int root) {
    ops.push_back({kind, dim, count_for(kind, bytes, dtype, dim_sizes[dim]), dtype, root});
  };
  switch (cfg.pattern) {
    case Pattern::k5d:
      add(Kind::kAllReduce, 0, cfg.size_bytes, f32, 0);   // tp
      add(Kind::kAllReduce, 1, cfg.size_bytes, f32, 0);   // dp
      add(Kind::kAllToAll, 2, cfg.size_bytes, f32, 0);    // ep
      add(Kind::kAllGather, 3, cfg.size_bytes, f32, 0);   // sp
      add(Kind::kAllGather, 4, cfg.size_bytes, f32, 0);   // pp
      break;
    case Pattern::kSingle:
      add(cfg.single, 0, cfg.size_bytes, f32, static_cast<int>(step % dim_sizes[0]));
      break;
    case Pattern::kRandom: {
      Rng rng(mix(cfg.seed) ^ mix(static_cast<std::uint64_t>(step) + 1));
      const int n_ops = 1 + static_cast<int>(rng.below(kNumDims));
      int max_shift = 0;
      while ((std::size_t{2} << max_shift) <= cfg.size_bytes) ++max_shift;
      for (int i = 0; i < n_ops; ++i) {
        const auto kind = static_cast<Kind>(rng.below(kNumKinds));
        const int dim = static_cast<int>(rng.below(kNumDims));
        const auto dtype = kRandomDtypes[rng.below(std::size(kRandomDtypes))];
        const std::size_t bytes = std::size_t{1} << rng.below(max_shift + 1);
        add(kind, dim, bytes, dtype, static_cast<int>(rng.below(dim_sizes[dim])));
      }
      break;
    }
  }
  return ops;
}

}  // namespace chorus_stress
