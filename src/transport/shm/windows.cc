// Shared-window barriers: every rank publishes how many barriers it has reached in its
// rank slot and waits until every other rank has reached as many. Waiting backs off
// (engine::WaitPolicy::for_shm: a short spin on an idle host, yield polling, then sleeping
// on the doorbell, which arrivals ring); while it waits it checks the deadline, aborts published by any rank and peer
// liveness, so it never hangs.
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "transport/shm/doorbell.h"
#include "transport/shm/engine.h"
#include "util/strings.h"

namespace chorus::shm {

namespace {
constexpr unsigned kRoundsPerLook = 16;  // polls between failure / deadline looks
constexpr int kSleepCapMs = 5;      // futex sleep bound: deadline and liveness re-checks
}  // namespace

Status Engine::window_failure(std::uint64_t target) {
  std::lock_guard<std::mutex> lk(mu_);
  if (closed_) return Status(ErrorCode::kAborted, "the shm transport was destroyed");
  check_peers();  // adopts a published abort; fails peers that departed or died
  if (aborted()) return abort_status();
  for (Peer& p : peers_) {
    if (p.rank == rank_ || !p.is_failed()) continue;
    if (seg_.slot(p.rank).win_arrived.load(std::memory_order_acquire) < target) return p.failed;
  }
  return Status::ok();
}

Status Engine::single_copy_failure(int rank, Status read_error) {
  for (int ms = 0; ms < 1000; ++ms) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (closed_) return Status(ErrorCode::kAborted, "the shm transport was destroyed");
      next_liveness_ns_ = 0;  // look at the processes now
      check_peers();
      if (aborted()) return abort_status();
      if (peers_[rank].is_failed()) return peers_[rank].failed;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return read_error;
}

// Every rank at barrier `target` must be there for the same operation: same seq and (when
// both are checked, nonzero) the same signature. Otherwise the ranks issued different
// collectives, and every rank, seeing every slot, reports it (kDesync naming a peer).
Status Engine::window_agreement(const transport::Tag& tag, std::uint64_t target) const {
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    const RankSlot& slot = seg_.slot(r);
    const std::uint64_t seq = slot.win_seq[target % 2].load(std::memory_order_relaxed);
    const std::uint64_t sig = slot.win_sig[target % 2].load(std::memory_order_relaxed);
    if (seq == tag.seq && !transport::signatures_differ(sig, tag.sig)) continue;
    const Peer& p = peers_[r];
    return Status(ErrorCode::kDesync,
                  str_printf("rank %d in %s seq %llu met peer rank %d (%s) in %s seq %llu at "
                             "shared-window barrier %llu (tag comm %u step %u): the ranks issued "
                             "different operations",
                             name(), describe(tag.sig).c_str(),
                             static_cast<unsigned long long>(tag.seq), p.name, p.address.c_str(),
                             describe(sig).c_str(), static_cast<unsigned long long>(seq),
                             static_cast<unsigned long long>(target), tag.comm, tag.step),
                  p.name, static_cast<std::int64_t>(tag.seq));
  }
  return Status::ok();
}

Status Engine::window_barrier(const transport::Tag& tag, Deadline deadline) {
  if (aborted()) return abort_status();
  const std::uint64_t target = win_count_.load(std::memory_order_relaxed) + 1;
  me_.win_seq[target % 2].store(tag.seq, std::memory_order_relaxed);
  me_.win_sig[target % 2].store(tag.sig, std::memory_order_relaxed);
  me_.win_arrived.store(target, std::memory_order_seq_cst);
  for (int r = 0; r < size_; ++r)
    if (r != rank_) ring(r);
  int behind = -1;  // a rank not there yet, checked first next time
  auto all_arrived = [&] {
    if (behind >= 0 && seg_.slot(behind).win_arrived.load(std::memory_order_acquire) < target)
      return false;
    for (int r = 0; r < size_; ++r) {
      if (r != rank_ && seg_.slot(r).win_arrived.load(std::memory_order_acquire) < target) {
        behind = r;
        return false;
      }
    }
    return true;
  };
  engine::WaitPolicy policy(win_wait_);
  auto start = engine::WaitPolicy::Clock::now();
  for (unsigned round = 0;; ++round) {
    if (all_arrived()) break;
    const auto phase = policy.phase(start, engine::WaitPolicy::Clock::now());
    if (phase != engine::WaitPolicy::Phase::kBlock) {
      if (phase == engine::WaitPolicy::Phase::kSpin)
        engine::WaitPolicy::cpu_relax();
      else
        ::sched_yield();
      if (round % kRoundsPerLook != kRoundsPerLook - 1) continue;
    } else {
      const std::uint32_t seen = me_.doorbell.load(std::memory_order_seq_cst);
      me_.sleeping.fetch_or(kFutexSleeper, std::memory_order_seq_cst);
      if (!all_arrived() && !aborted())
        sleep_on_doorbell(me_, seen, std::max(20L, deadline.remaining_us(1000L * kSleepCapMs)));
      me_.sleeping.fetch_and(~kFutexSleeper, std::memory_order_relaxed);
      start = engine::WaitPolicy::Clock::now();  // woken: poll again for a while
    }
    if (all_arrived()) break;
    CHORUS_RETURN_IF_ERROR(window_failure(target));
    if (deadline.expired()) {
      const Peer& p = peers_[behind];
      return Status(ErrorCode::kTimeout,
                    str_printf("deadline passed waiting for peer rank %d (%s) at shared-window "
                               "barrier %llu, tag comm %u seq %llu step %u",
                               p.name, p.address.c_str(), static_cast<unsigned long long>(target),
                               tag.comm, static_cast<unsigned long long>(tag.seq), tag.step),
                    p.name, static_cast<std::int64_t>(tag.seq));
    }
  }
  CHORUS_RETURN_IF_ERROR(window_agreement(tag, target));
  // Everyone arrived, but a rank that aborted while still at this barrier (e.g. it timed
  // out waiting for us before we came) has failed this operation: so do we, never half
  // the ranks succeeding. A rank already at a later barrier completed this one; its abort
  // is about a later operation, which this rank will learn of there.
  for (int r = 0; r < size_; ++r)
    if (r != rank_ && seg_.slot(r).state.load(std::memory_order_acquire) == kAborted &&
        seg_.slot(r).win_arrived.load(std::memory_order_acquire) == target) {
      Status s = window_failure(target);
      if (!s.is_ok()) return s;
    }
  win_count_.store(target, std::memory_order_relaxed);
  return Status::ok();
}

}  // namespace chorus::shm
