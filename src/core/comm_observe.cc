// CommImpl's observation: setting up the timeline and statistics at create(), stats(),
// and the profiler hook.
#include <atomic>

#include "core/clock_sync.h"
#include "core/comm_impl.h"
#include "core/membership.h"
#include "diag/timeline.h"
#include "util/strings.h"

namespace chorus::core {

namespace {

constexpr int kClockRounds = 5;

// This process's number for a new communicator (comm ids repeat: a sub-communicator's
// keys are nested, so its own init counter starts at 0 again).
std::uint32_t next_local_id() {
  static std::atomic<std::uint32_t> next{0};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

Status CommImpl::start_observing() {
  local_id_ = next_local_id();
  ObserverSettings s;
  s.comm_id = local_id_;
  s.comm_key = members_->key_prefix() + str_printf("comm%u", comm_id_);
  s.rank = rank_;
  s.size = size_;
  s.stats = cfg_.stats || diag_.stats;
  s.print_stats = diag_.stats;
  if (!diag_.timeline.empty()) {
    diag::Timeline& t = diag::Timeline::process();
    // The process's first communicator aligns the clocks (every process creates its
    // first communicator together with the others); later ones share its file.
    diag::ClockAlignment clock;
    if (!t.is_open())
      clock = align_clock(*comm_store_, rank_, size_, kClockRounds,
                          Deadline::after(cfg_.connect_timeout));
    s.timeline = t.acquire(diag_.timeline, rank_, size_, clock);
    if (s.timeline) t.add_comm(local_id_, s.comm_key, rank_, size_);
  }
  auto obs = std::make_unique<Observer>(std::move(s));
  if (obs->needed()) observe_ = std::move(obs);
  return Status::ok();
}

std::vector<OpStatsRow> CommImpl::stats() const {
  return observe_ ? observe_->stats() : std::vector<OpStatsRow>{};
}

std::string CommImpl::stats_text() const { return diag::format_rank_stats(stats()); }

void CommImpl::set_profiler(std::shared_ptr<Profiler> profiler) {
  if (!observe_) {
    if (!profiler) return;
    ObserverSettings s;
    s.comm_id = local_id_;
    s.comm_key = members_->key_prefix() + str_printf("comm%u", comm_id_);
    s.rank = rank_;
    s.size = size_;
    observe_ = std::make_unique<Observer>(std::move(s));
  }
  observe_->set_profiler(std::move(profiler));
}

}  // namespace chorus::core
