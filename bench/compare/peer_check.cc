// Exact inputs and expected outputs of the peer benchmarks (see peer_check.h).
#include "peer_check.h"

#include <algorithm>

namespace compare {
namespace {

constexpr float kPoison = -1.0f;  // no expected value is negative

// Input element `j` of rank `r`; reductions keep each term <= 120/n so sums stay small.
std::int64_t input(Op op, int r, int nranks, std::size_t j) {
  std::size_t ur = static_cast<std::size_t>(r);
  if (op == Op::kAllReduce || op == Op::kReduceScatter) {
    std::size_t top = static_cast<std::size_t>(std::clamp(120 / nranks, 1, 10)) + 1;
    return static_cast<std::int64_t>((j * 5 + ur * 3 + 1) % top);
  }
  return static_cast<std::int64_t>((ur * 41 + j * 3) % 97);
}

std::int64_t reduced(Op op, int nranks, std::size_t j) {
  std::int64_t sum = 0;
  for (int r = 0; r < nranks; ++r) sum += input(op, r, nranks, j);
  return sum;
}

// Expected output element `i` of rank `rank`.
std::int64_t expected(Op op, const Shape& s, int rank, int nranks, int root, std::size_t i) {
  std::size_t c = s.count, me = static_cast<std::size_t>(rank);
  switch (op) {
    case Op::kAllReduce: return reduced(op, nranks, i);
    case Op::kReduceScatter: return reduced(op, nranks, me * c + i);
    case Op::kBroadcast: return input(op, root, nranks, i);
    case Op::kAllGather: return input(op, static_cast<int>(i / c), nranks, i % c);
    case Op::kAllToAll: return input(op, static_cast<int>(i / c), nranks, me * c + i % c);
  }
  return -1;
}

}  // namespace

void fill_buffers(Op op, const Shape& shape, int rank, int nranks, int root, float* send,
                  float* recv) {
  std::fill(recv, recv + std::max(shape.out_elems, shape.in_elems), kPoison);
  bool reads = op != Op::kBroadcast || rank == root;
  for (std::size_t j = 0; j < shape.in_elems; ++j)
    send[j] = reads ? static_cast<float>(input(op, rank, nranks, j)) : kPoison;
}

std::int64_t count_wrong(Op op, const Shape& shape, int rank, int nranks, int root,
                         const float* out) {
  std::int64_t wrong = 0;
  for (std::size_t i = 0; i < shape.out_elems; ++i)
    if (out[i] != static_cast<float>(expected(op, shape, rank, nranks, root, i))) ++wrong;
  return wrong;
}

}  // namespace compare
