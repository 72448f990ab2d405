// Names of the operation kinds.
#include "op/kind.h"

namespace chorus::op {

const char* to_string(CollKind k) {
  switch (k) {
    case CollKind::kAllReduce: return "all_reduce";
    case CollKind::kReduce: return "reduce";
    case CollKind::kBroadcast: return "broadcast";
    case CollKind::kAllGather: return "all_gather";
    case CollKind::kReduceScatter: return "reduce_scatter";
    case CollKind::kAllToAll: return "all_to_all";
    case CollKind::kAllToAllV: return "all_to_all_v";
    case CollKind::kGather: return "gather";
    case CollKind::kScatter: return "scatter";
    case CollKind::kBarrier: return "barrier";
    case CollKind::kSend: return "send";
    case CollKind::kRecv: return "recv";
  }
  return "invalid";
}

}  // namespace chorus::op
