// What each step issues: the same list on every rank, derived from the pattern, the
// step number and the seed only.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "chorus/types.h"
#include "stress_config.h"

namespace chorus_stress {

struct OpSpec {
  Kind kind;
  int dim;                 // stream slot and communicator (kDimNames[dim])
  std::size_t count;       // elements per rank block (see buffer_counts)
  chorus::DataType dtype;
  int root = 0;            // broadcast
};

// Elements of the send and receive buffers of `op` on a communicator of `n` ranks.
struct BufferCounts {
  std::size_t send;
  std::size_t recv;
};
BufferCounts buffer_counts(const OpSpec& op, int n);

// Bytes of `op` in the nccl-tests convention (what --size means), and the factor that
// turns its algorithm bandwidth into bus bandwidth on `n` ranks.
std::size_t op_bytes(const OpSpec& op, int n);
double busbw_factor(Kind kind, int n);

// The operations of `step`. `dim_sizes[d]` is the size of dimension d's communicator.
std::vector<OpSpec> plan_step(const StressConfig& cfg, std::int64_t step,
                              const std::array<int, kNumDims>& dim_sizes);

}  // namespace chorus_stress
