// Exact inputs and expected outputs of the peer benchmarks: small integers in float32,
// so every sum is exact whatever order a system reduces in.
#pragma once

#include <cstdint>

#include "peer_bench.h"

namespace compare {

// Writes this rank's send buffer (shape.in_elems values) and poisons the receive buffer.
void fill_buffers(Op op, const Shape& shape, int rank, int nranks, int root, float* send,
                  float* recv);

// Counts this rank's output elements (at `out`) that differ from the expected values.
std::int64_t count_wrong(Op op, const Shape& shape, int rank, int nranks, int root,
                         const float* out);

}  // namespace compare
