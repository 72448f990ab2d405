// Communicator::estimate: the selector's choice and the cost model's predicted time of
// one collective, without running it.
#include "api/error.h"
#include "chorus/communicator.h"
#include "core/comm.h"
#include "util/strings.h"

namespace chorus {

Estimate Communicator::estimate(const std::string& collective, std::size_t count,
                                DataType dtype) const {
  int kind = -1;
  for (int k = 0; k <= static_cast<int>(op::CollKind::kBarrier); ++k)
    if (collective == op::to_string(static_cast<op::CollKind>(k))) kind = k;
  if (kind < 0)
    throw Error(ErrorCode::kInvalidArgument,
                "collective '" + collective + "' is not a collective (all_reduce, reduce, "
                "broadcast, all_gather, reduce_scatter, all_to_all, all_to_all_v, gather, "
                "scatter, barrier)");
  if (!is_valid(dtype))
    throw Error(ErrorCode::kInvalidArgument,
                str_printf("dtype %d is not a DataType", static_cast<int>(dtype)));
  const algo::Estimate e =
      impl().estimate(static_cast<op::CollKind>(kind), count * dtype_size(dtype));
  Estimate out;
  out.algo = e.choice.name;
  out.predicted_us = e.predicted_us;
  out.source = e.source;
  out.rule_algo = e.rule_algo;
  out.model_algo = e.model_algo;
  for (const auto& [name, us] : e.candidates) out.candidates.emplace_back(name, us);
  return out;
}

}  // namespace chorus
