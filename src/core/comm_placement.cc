// The communicator's side of placement (core/placement.h): the pricing agreed per
// collective (the hand-off scale, and whether every rank's buffers are registered memory)
// and the selector that prices with it.
#include <algorithm>

#include "algo/cost_model.h"
#include "core/comm_impl.h"
#include "diag/log.h"

namespace chorus::core {

void CommImpl::start_placement() {
  parse_placement(cfg_.placement, placement_policy_);  // checked by resolve_config
  if (size_ < 2) return;
  // Off: the scale stays 1, but registration is still agreed where single copy runs.
  if (placement_policy_.mode == PlacementPolicy::Mode::kOff && !caps_.single_copy) return;
  transport::SharedWindows* w = transport_->shared_windows();
  if (w == nullptr || w->common_word() == nullptr) return;
  std::vector<std::atomic<std::uint64_t>*> words;
  for (int r = 0; r < size_; ++r) words.push_back(w->rank_word(r));
  placement_ = std::make_unique<PlacementAgreement>(rank_, std::move(words), w->common_word());
}

// Collectives of less than a page (what mem_alloc rounds to) say nothing: a program's
// scalars (a loss, an agreed-exit flag, chorus-bench's own timing maxima) live on its stack
// or heap whatever its large buffers do, and would otherwise turn mapped pricing off and
// on again around every step.
constexpr std::size_t kRegistrationMinBytes = 4096;

bool CommImpl::buffers_mapped(const IssuedOp& op) const {
  const transport::SharedWindows* w = transport_->shared_windows();
  if (!caps_.single_copy || w == nullptr) return last_mapped_;
  const op::CollArgs& a = op.args;
  const std::size_t b = a.count * dtype_size(a.dtype), all = b * static_cast<std::size_t>(size_);
  const void* send = a.send;
  const void* recv = a.recv;
  std::size_t send_bytes = b, recv_bytes = b;  // all_reduce
  switch (op.kind) {
    case op::CollKind::kAllReduce: break;
    case op::CollKind::kBroadcast:  // the root's send buffer, the others' receive buffer
      if (rank_ == a.root) recv = send;
      else send = recv;
      break;
    case op::CollKind::kAllGather: recv_bytes = all; break;
    case op::CollKind::kReduceScatter: send_bytes = all; break;
    case op::CollKind::kAllToAll: send_bytes = recv_bytes = all; break;
    default: return last_mapped_;  // no single-copy algorithm: says nothing of the buffers
  }
  if (std::max(send_bytes, recv_bytes) < kRegistrationMinBytes) return last_mapped_;
  return w->mappable(send, send_bytes) && w->mappable(recv, recv_bytes);
}

// Every rank publishes whether its buffers were registered; rank 0 asks for mapped pricing
// while every rank's last such collective was, and for the hand-off scale it measures.
// The answer is a hint: a collective priced as mapped whose buffers are not (a program
// that changed buffers) still runs correctly, single copy then going through system calls.
Pricing CommImpl::agreed_pricing(const IssuedOp& op) {
  if (!placement_) return Pricing{};
  last_mapped_ = buffers_mapped(op);
  int wanted = 0;
  if (rank_ == 0) {
    Pricing want;
    want.scale = placement_policy_.mode == PlacementPolicy::Mode::kFixed
                     ? placement_policy_.fixed_scale
                 : placement_policy_.mode == PlacementPolicy::Mode::kOff
                     ? 1
                     : wanted_scale(transport_->shared_windows()->hand_off(), pricing_.scale);
    want.mapped = last_mapped_ && placement_->others_flagged();
    wanted = want.code();
  }
  const std::uint64_t confirmed = placement_->confirmed();
  const Pricing before = pricing_;
  pricing_ = Pricing::of(placement_->value_for(op.args.seq, wanted, cfg_.timeout, last_mapped_));
  if (placement_->confirmed() != confirmed) {
    const Pricing want = Pricing::of(wanted);
    const transport::HandOff h = transport_->shared_windows()->hand_off();
    if (want.scale != before.scale)
      CHORUS_LOG(INFO, Coll,
                 "comm %u: cache-line hand-off %.0f ns (best %.0f): hand-offs priced x%d from "
                 "shortly after seq %llu on",
                 comm_id_, h.now_ns, h.floor_ns, want.scale,
                 static_cast<unsigned long long>(op.args.seq));
    if (want.mapped != before.mapped)
      CHORUS_LOG(INFO, Coll, "comm %u: every rank's buffers %s registered memory: single copy "
                 "priced %s from shortly after seq %llu on",
                 comm_id_, want.mapped ? "are" : "are no longer",
                 want.mapped ? "at memory speed" : "through system calls",
                 static_cast<unsigned long long>(op.args.seq));
  }
  return pricing_;
}

const algo::Selector& CommImpl::selector_for(Pricing pricing) const {
  if (pricing == Pricing{}) return selector_;
  std::optional<algo::Selector>& s = priced_[static_cast<std::size_t>(pricing.code())];
  if (!s) {
    // The measured model alone: the tuning table's rows were timed in whatever placement
    // chorus-tune ran in, with heap buffers. Overrides (CHORUS_ALGO) still apply.
    algo::SelectorConfig cfg = sel_cfg_;
    cfg.table.clear();
    cfg.cost = algo::with_hand_off_scale(cfg.cost, pricing.scale);
    cfg.cost.mapped_peers = pricing.mapped;
    Result<algo::Selector> made = algo::Selector::create(cfg);
    if (!made) return selector_;  // accepted once with these settings: not expected
    s.emplace(std::move(made).value());
  }
  return *s;
}

}  // namespace chorus::core
