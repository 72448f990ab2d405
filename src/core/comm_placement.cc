// The communicator's side of placement (core/placement.h): the agreed scale per collective
// and the selector that prices hand-offs at it.
#include "algo/cost_model.h"
#include "core/comm_impl.h"
#include "diag/log.h"

namespace chorus::core {

void CommImpl::start_placement() {
  parse_placement(cfg_.placement, placement_policy_);  // checked by resolve_config
  if (placement_policy_.mode == PlacementPolicy::Mode::kOff || size_ < 2) return;
  transport::SharedWindows* w = transport_->shared_windows();
  if (w == nullptr || w->common_word() == nullptr) return;
  std::vector<std::atomic<std::uint64_t>*> words;
  for (int r = 0; r < size_; ++r) words.push_back(w->rank_word(r));
  placement_ = std::make_unique<PlacementAgreement>(rank_, std::move(words), w->common_word());
}

int CommImpl::placement_scale(std::uint64_t seq) {
  if (!placement_) return 1;
  int wanted = 0;
  if (rank_ == 0)
    wanted = placement_policy_.mode == PlacementPolicy::Mode::kFixed
                 ? placement_policy_.fixed_scale
                 : wanted_scale(transport_->shared_windows()->hand_off(), scale_);
  const std::uint64_t confirmed = placement_->confirmed();
  scale_ = placement_->scale_for(seq, wanted, cfg_.timeout);
  if (placement_->confirmed() != confirmed) {
    const transport::HandOff h = transport_->shared_windows()->hand_off();
    CHORUS_LOG(INFO, Coll,
               "comm %u: cache-line hand-off %.0f ns (best %.0f): hand-offs priced x%d from "
               "shortly after seq %llu on",
               comm_id_, h.now_ns, h.floor_ns, wanted, static_cast<unsigned long long>(seq));
  }
  return scale_;
}

const algo::Selector& CommImpl::selector_for(int scale) const {
  if (scale <= 1) return selector_;
  std::optional<algo::Selector>& s = scaled_[static_cast<std::size_t>(scale)];
  if (!s) {
    // The measured model alone: the tuning table's rows were timed in whatever placement
    // chorus-tune ran in. Overrides (CHORUS_ALGO) still apply.
    algo::SelectorConfig cfg = sel_cfg_;
    cfg.table.clear();
    cfg.cost = algo::with_hand_off_scale(cfg.cost, scale);
    Result<algo::Selector> made = algo::Selector::create(cfg);
    if (!made) return selector_;  // accepted once with these settings: not expected
    s.emplace(std::move(made).value());
  }
  return *s;
}

}  // namespace chorus::core
