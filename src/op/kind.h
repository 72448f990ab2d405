// The kinds of operation a communicator runs (collectives and point-to-point), their
// names, and which of them combine with a ReduceOp or have a root.
#pragma once

namespace chorus::op {

enum class CollKind : int {
  kAllReduce = 0, kReduce, kBroadcast, kAllGather, kReduceScatter, kAllToAll, kAllToAllV,
  kGather, kScatter, kBarrier, kSend, kRecv,
};
// How many kinds there are (tables indexed by kind).
inline constexpr int kNumKinds = static_cast<int>(CollKind::kRecv) + 1;

// "all_reduce", "broadcast", ... ("invalid" for a value outside the enum).
const char* to_string(CollKind k);
// The collectives that combine with a ReduceOp, and those that have a root.
inline bool takes_reduce_op(CollKind k) {
  return k == CollKind::kAllReduce || k == CollKind::kReduce || k == CollKind::kReduceScatter;
}
inline bool takes_root(CollKind k) {
  return k == CollKind::kReduce || k == CollKind::kBroadcast || k == CollKind::kGather ||
         k == CollKind::kScatter;
}

}  // namespace chorus::op
