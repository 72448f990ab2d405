// Names, buffer shapes and bus-bandwidth factors of the compared collectives
// (the same conventions as tools/chorus-bench/collective.cc).
#include "peer_bench.h"

namespace compare {

const char* op_name(Op op) {
  switch (op) {
    case Op::kAllReduce: return "all_reduce";
    case Op::kAllGather: return "all_gather";
    case Op::kReduceScatter: return "reduce_scatter";
    case Op::kBroadcast: return "broadcast";
    case Op::kAllToAll: return "all_to_all";
  }
  return "?";
}

Shape shape_for(Op op, std::size_t bytes, int nranks) {
  Shape s;
  std::size_t n = static_cast<std::size_t>(nranks), elems = bytes / sizeof(float);
  if (op == Op::kAllReduce || op == Op::kBroadcast) {
    s.count = s.elems = s.in_elems = s.out_elems = elems;
    return s;
  }
  s.count = elems / n;
  s.elems = s.count * n;
  s.in_elems = op == Op::kAllGather ? s.count : s.elems;
  s.out_elems = op == Op::kReduceScatter ? s.count : s.elems;
  return s;
}

double busbw_factor(Op op, int nranks) {
  double n = nranks;
  switch (op) {
    case Op::kAllReduce: return 2.0 * (n - 1) / n;
    case Op::kBroadcast: return 1.0;
    default: return (n - 1) / n;
  }
}

}  // namespace compare
