// Shared-memory progress rounds for the engine's wait loop: move what the rings allow and
// watch the peers; a blocking round sleeps on this rank's doorbell futex (rung by whoever
// has news for it) in slices that re-check deadline, abort and liveness.
#include <algorithm>

#include "transport/shm/doorbell.h"
#include "transport/shm/engine.h"
#include "util/strings.h"

namespace chorus::shm {

namespace {
constexpr long kSleepCapUs = 10'000;  // futex sleep bound: liveness and deadline re-checks
}  // namespace

bool Engine::progress(std::unique_lock<std::mutex>& lk, Deadline deadline, bool block) {
  bool any = progress_all();
  check_peers();
  if (any || !block) return any;
  const std::uint32_t seen = me_.doorbell.load(std::memory_order_seq_cst);
  me_.sleeping.fetch_or(kFutexSleeper, std::memory_order_seq_cst);
  if (progress_all() || aborted()) {
    me_.sleeping.fetch_and(~kFutexSleeper, std::memory_order_relaxed);
    return true;
  }
  const long us = std::max(20L, deadline.remaining_us(kSleepCapUs));
  lk.unlock();
  sleep_on_doorbell(me_, seen, us);
  lk.lock();
  me_.sleeping.fetch_and(~kFutexSleeper, std::memory_order_relaxed);
  any = progress_all();
  check_peers();
  return any;
}

// A peer waiting at a shared-window barrier for the same (comm, seq) as one of `ops` but
// with another signature issued a different operation than this rank (which waits for a
// message): kDesync, instead of both waiting until the deadline.
Status Engine::after_block(std::span<Op* const> ops) {
  for (Op* op : ops) {
    if (op == nullptr || op->done.load(std::memory_order_acquire)) continue;
    CHORUS_RETURN_IF_ERROR(claims(op->tag));
  }
  return Status::ok();
}

Status Engine::held_elsewhere(const transport::Tag& tag) const { return claims(tag); }

Status Engine::claims(const transport::Tag& tag) const {
  // Point-to-point seqs count per pair: they name no collective a barrier could be in.
  if ((tag.sig & transport::kSigPerPeer) != 0) return Status::ok();
  const std::uint64_t win_mine = win_count_.load(std::memory_order_relaxed);
  const std::uint64_t mb_mine = mb_count_.load(std::memory_order_relaxed);
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    const RankSlot& slot = seg_.slot(r);
    for (const Sync kind : {Sync::kWindows, Sync::kMailbox}) {
      // The point the peer reached last; one this rank has yet to reach means it waits there.
      const std::uint64_t at = latest(slot, kind);
      if (at <= (kind == Sync::kWindows ? win_mine : mb_mine)) continue;
      const Claim c = claim(slot, kind, at);
      if (tag.seq != c.seq || !transport::signatures_differ(tag.sig, c.sig)) continue;
      const Peer& p = peers_[r];
      return Status(ErrorCode::kDesync,
                    str_printf("rank %d waits for %s seq %llu, but peer rank %d (%s) is in %s "
                               "seq %llu at a %s: the ranks issued different operations",
                               name(), describe(tag.sig).c_str(),
                               static_cast<unsigned long long>(c.seq), p.name, p.address.c_str(),
                               describe(c.sig).c_str(), static_cast<unsigned long long>(c.seq),
                               sync_name(kind)),
                    p.name, static_cast<std::int64_t>(c.seq));
    }
  }
  return Status::ok();
}

}  // namespace chorus::shm
