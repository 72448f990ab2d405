// Shared-window barriers and mailbox exchanges: every rank publishes how far it got in
// its rank slot (the barriers it reached, or the exchange its mailbox holds, with the
// payload in the same cache lines) and waits until every other rank got as far. Waiting
// backs off (engine::WaitPolicy::for_shm: a short spin on an idle host, yield polling,
// then sleeping on the doorbell, which arrivals ring), after moving off the processor of
// the rank it waits for if they share one (spread.cc); while it waits it checks the
// deadline, aborts published by any rank, peer liveness and peers waiting elsewhere in the
// same operation, so it never hangs.
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <optional>
#include <thread>

#include "transport/shm/doorbell.h"
#include "transport/shm/engine.h"
#include "util/spin_lock.h"
#include "util/strings.h"

namespace chorus::shm {

namespace {
constexpr unsigned kRoundsPerLook = 16;  // rounds between failure / deadline looks
constexpr int kPausesPerRound = 16;      // spinning: pauses (each then a poll) per clock reading
constexpr int kSleepCapMs = 5;      // futex sleep bound: deadline and liveness re-checks

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

Status Engine::sync_failure(Sync kind, std::uint64_t target) {
  std::lock_guard<std::mutex> lk(mu_);
  if (closed_) return Status(ErrorCode::kAborted, "the shm transport was destroyed");
  check_peers();  // adopts a published abort; fails peers that departed or died
  if (aborted()) return abort_status();
  for (Peer& p : peers_) {
    if (p.rank == rank_ || !p.is_failed()) continue;
    if (arrived(seg_.slot(p.rank), kind, target) < target) return p.failed;
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

// Every rank at synchronisation point `target` must be there for the same operation: same
// seq and (when both are checked, nonzero) the same signature. Otherwise the ranks issued
// different collectives, and every rank, seeing every slot, reports it (kDesync naming a peer).
Status Engine::sync_agreement(Sync kind, const transport::Tag& tag, std::uint64_t target) const {
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    const Claim c = claim(seg_.slot(r), kind, target);
    if (c.seq == tag.seq && !transport::signatures_differ(c.sig, tag.sig)) continue;
    const Peer& p = peers_[r];
    return Status(ErrorCode::kDesync,
                  str_printf("rank %d in %s seq %llu met peer rank %d (%s) in %s seq %llu at "
                             "%s %llu (tag comm %u step %u): the ranks issued different "
                             "operations",
                             name(), describe(tag.sig).c_str(),
                             static_cast<unsigned long long>(tag.seq), p.name, p.address.c_str(),
                             describe(c.sig).c_str(), static_cast<unsigned long long>(c.seq),
                             sync_name(kind), static_cast<unsigned long long>(target), tag.comm,
                             tag.step),
                  p.name, static_cast<std::int64_t>(tag.seq));
  }
  return Status::ok();
}

Status Engine::window_barrier(const transport::Tag& tag, Deadline deadline,
                              const util::FunctionRef<void()>* meanwhile) {
  if (aborted()) return abort_status();
  const std::uint64_t target = win_count_.load(std::memory_order_relaxed) + 1;
  me_.win_seq[target % 2].store(tag.seq, std::memory_order_relaxed);
  me_.win_sig[target % 2].store(tag.sig, std::memory_order_relaxed);
  me_.cpu.store(::sched_getcpu(), std::memory_order_relaxed);
  stamp_arrival(Sync::kWindows, target);
  me_.win_arrived.store(target, std::memory_order_seq_cst);
  std::optional<std::int64_t> worked_until;
  if (meanwhile != nullptr) {
    ring_peers();
    (*meanwhile)();
    worked_until = HandOffMeter::sampled(target) ? steady_ns() : 0;
  }
  CHORUS_RETURN_IF_ERROR(wait_arrivals(Sync::kWindows, target, tag, deadline, worked_until));
  win_count_.store(target, std::memory_order_relaxed);
  return Status::ok();
}

Status Engine::mailbox_exchange(const void* data, std::size_t bytes, const transport::Tag& tag,
                                Deadline deadline) {
  if (aborted()) return abort_status();
  const std::uint64_t target = mb_count_.load(std::memory_order_relaxed) + 1;
  Mailbox& m = me_.mailbox[target % 2];
  if (bytes > 0) std::memcpy(m.data, data, bytes);
  m.seq.store(tag.seq, std::memory_order_relaxed);
  m.sig.store(tag.sig, std::memory_order_relaxed);
  me_.cpu.store(::sched_getcpu(), std::memory_order_relaxed);
  stamp_arrival(Sync::kMailbox, target);
  m.stamp.store(target, std::memory_order_seq_cst);
  CHORUS_RETURN_IF_ERROR(wait_arrivals(Sync::kMailbox, target, tag, deadline));
  mb_count_.store(target, std::memory_order_relaxed);
  // The peers' payloads beyond the stamp's line (assuming they published as many bytes as
  // this rank; the collective's are the same): fetched all at once, not line after line
  // as the reader's first loads would.
  for (std::size_t off = 64; off < bytes + offsetof(Mailbox, data); off += 64)
    for (int r = 0; r < size_; ++r)
      if (r != rank_)
        __builtin_prefetch(reinterpret_cast<const char*>(&seg_.slot(r).mailbox[target % 2]) + off);
  return Status::ok();
}

const void* Engine::mailbox(int rank) const {
  return seg_.slot(rank).mailbox[mb_count_.load(std::memory_order_relaxed) % 2].data;
}

// Window barriers and mailbox exchanges belong to operations that run one at a time, in
// the same order on every rank (core's window tickets), and one operation uses one kind.
// So a peer that has not arrived at point `target` of `kind` but waits at a point of the
// other kind that this rank has not completed will never arrive: it runs another
// operation (kDesync). The peer's arrival is looked at again after its claim is read: it
// may have arrived and gone on to the next operation meanwhile.
Status Engine::stray_peer(Sync kind, std::uint64_t target, const transport::Tag& tag) const {
  const Sync other = kind == Sync::kWindows ? Sync::kMailbox : Sync::kWindows;
  const std::uint64_t done = other == Sync::kWindows ? win_count_.load(std::memory_order_relaxed)
                                                     : mb_count_.load(std::memory_order_relaxed);
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    const RankSlot& slot = seg_.slot(r);
    const std::uint64_t at = latest(slot, other);
    if (at <= done) continue;
    const Claim c = claim(slot, other, at);
    if (arrived(slot, kind, target) >= target) continue;
    const Peer& p = peers_[r];
    return Status(ErrorCode::kDesync,
                  str_printf("rank %d in %s seq %llu, but peer rank %d (%s) waits at a %s in %s "
                             "seq %llu (this rank at %s %llu): the ranks issued different "
                             "operations",
                             name(), describe(tag.sig).c_str(),
                             static_cast<unsigned long long>(tag.seq), p.name, p.address.c_str(),
                             sync_name(other), describe(c.sig).c_str(),
                             static_cast<unsigned long long>(c.seq), sync_name(kind),
                             static_cast<unsigned long long>(target)),
                  p.name, static_cast<std::int64_t>(tag.seq));
  }
  return Status::ok();
}

// This rank has published its arrival at `target`: rings the peers (a sleeping one wakes
// only if it sleeps; not again when the caller rang them and worked since) and waits for
// theirs.
Status Engine::wait_arrivals(Sync kind, std::uint64_t target, const transport::Tag& tag,
                             Deadline deadline, std::optional<std::int64_t> worked_until) {
  if (!worked_until) ring_peers();
  int behind = -1;  // a rank not there yet, checked first next time
  auto all_arrived = [&] {
    if (behind >= 0 && arrived(seg_.slot(behind), kind, target) < target) return false;
    for (int r = 0; r < size_; ++r) {
      if (r != rank_ && arrived(seg_.slot(r), kind, target) < target) {
        behind = r;
        return false;
      }
    }
    return true;
  };
  engine::WaitPolicy policy(win_wait_);
  // Peers that arrive within a round of pauses are met before any clock reading.
  auto spin = [&] {
    for (int i = 0; i < kPausesPerRound; ++i) {
      util::cpu_pause();
      if (all_arrived()) return true;
    }
    return false;
  };
  if (policy.may_spin() && spin()) {
    sample_hand_off(kind, target, worked_until);
    return agreed(kind, target, tag);
  }
  // The rank not there yet may be waiting for this thread's processor.
  if (behind >= 0 || !all_arrived()) spread_from(behind);
  auto start = engine::WaitPolicy::Clock::now();
  for (unsigned round = 0;; ++round) {
    if (all_arrived()) break;
    const auto phase = policy.phase(start, engine::WaitPolicy::Clock::now());
    if (phase != engine::WaitPolicy::Phase::kBlock) {
      if (phase == engine::WaitPolicy::Phase::kSpin) {
        // A look after every pause: one pause is 20-40 ns, a clock reading ~30 ns on a VM,
        // and an arrival is met within one pause, not within a round of them.
        if (spin()) {
          sample_hand_off(kind, target, worked_until);
          break;
        }
      } else {
        ::sched_yield();
      }
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
    CHORUS_RETURN_IF_ERROR(sync_failure(kind, target));
    CHORUS_RETURN_IF_ERROR(stray_peer(kind, target, tag));
    if (deadline.expired()) {
      const Peer& p = peers_[behind];
      return Status(ErrorCode::kTimeout,
                    str_printf("deadline passed waiting for peer rank %d (%s) at %s %llu, tag "
                               "comm %u seq %llu step %u",
                               p.name, p.address.c_str(), sync_name(kind),
                               static_cast<unsigned long long>(target),
                               tag.comm, static_cast<unsigned long long>(tag.seq), tag.step),
                    p.name, static_cast<std::int64_t>(tag.seq));
    }
  }
  return agreed(kind, target, tag);
}

void Engine::stamp_arrival(Sync kind, std::uint64_t target) {
  if (HandOffMeter::sampled(target))
    arrive_ns(me_, kind, target).store(steady_ns(), std::memory_order_relaxed);
}

// Called right after a spin saw the last rank arrive. The sample counts only when this
// rank was waiting before every other rank arrived (since its own stamp, or since the end
// of work it did after arriving), not arriving late or busy. The peers' times lie on the
// lines of their arrival words, which the spin has just read.
void Engine::sample_hand_off(Sync kind, std::uint64_t target,
                             std::optional<std::int64_t> worked_until) {
  if (!HandOffMeter::sampled(target)) return;
  const std::int64_t seen = steady_ns();
  const std::int64_t mine = worked_until.value_or(
      arrive_ns(me_, kind, target).load(std::memory_order_relaxed));
  std::int64_t last = 0;
  for (int r = 0; r < size_; ++r)
    if (r != rank_)
      last = std::max(last, arrive_ns(seg_.slot(r), kind, target).load(std::memory_order_relaxed));
  if (mine < last) hand_off_.add(seen - last);
}

Status Engine::agreed(Sync kind, std::uint64_t target, const transport::Tag& tag) {
  CHORUS_RETURN_IF_ERROR(sync_agreement(kind, tag, target));
  // Everyone arrived, but a rank that aborted while still at this barrier (e.g. it timed
  // out waiting for us before we came) has failed this operation: so do we, never half
  // the ranks succeeding. A rank already at a later barrier completed this one; its abort
  // is about a later operation, which this rank will learn of there.
  for (int r = 0; r < size_; ++r)
    if (r != rank_ && seg_.slot(r).state.load(std::memory_order_acquire) == kAborted &&
        arrived(seg_.slot(r), kind, target) == target) {
      Status s = sync_failure(kind, target);
      if (!s.is_ok()) return s;
    }
  return Status::ok();
}

}  // namespace chorus::shm
