// Engine probe: a receive from any source waits here, driving progress like wait(), until
// one of its candidate messages is held (an unexpected payload, a sender's offer, or a
// message parked in the medium), and learns which peer to receive from.

#include <algorithm>
#include <vector>

#include "transport/engine/engine.h"

namespace chorus::engine {

bool Engine::holds(const PeerState& p, const transport::Tag& tag) const {
  if (std::any_of(p.unexpected.begin(), p.unexpected.end(),
                  [&](const Unexpected& u) { return u.tag.matches(tag); }))
    return true;
  const transport::Tag* t = parked(p);
  return t != nullptr && t->matches(tag);
}

int Engine::probe_held(std::span<const transport::ProbeTarget> targets, Status* st) const {
  for (std::size_t i = 0; i < targets.size(); ++i)
    if (holds(peer(targets[i].peer), targets[i].tag)) return static_cast<int>(i);
  // Nothing held. A peer that refused us ends the wait; one that is gone (it may have left
  // after its last send) only drops out, unless every candidate is gone: another can still
  // send what we wait for.
  const PeerState* gone = nullptr;
  bool any_alive = false;
  for (const transport::ProbeTarget& t : targets) {
    const PeerState& p = peer(t.peer);
    if (!p.desynced.is_ok()) {
      *st = p.desynced;
      return -1;
    }
    if (p.is_failed()) gone = &p;
    else any_alive = true;
  }
  if (!any_alive && gone != nullptr) *st = gone->failed;
  return -1;
}

Result<int> Engine::probe(std::span<const transport::ProbeTarget> targets, Deadline deadline) {
  std::unique_lock<std::mutex> lk(mu_);
  ++probing_;
  struct Leave {
    int& n;
    ~Leave() { --n; }  // mu_ is held again whenever probe() returns
  } leave{probing_};
  bool polled = false;
  WaitPolicy::Clock::time_point start{};
  for (;;) {
    if (aborted()) return abort_status();
    if (closed_) return closed_status();
    Status lost;
    const int found = probe_held(targets, &lost);
    if (found >= 0) return found;
    if (!lost.is_ok()) return lost;
    if (deadline.expired()) {
      std::vector<transport::ProbeTarget> named(targets.begin(), targets.end());
      for (transport::ProbeTarget& t : named) t.peer = peer(t.peer).name;
      return transport::probe_timeout(name_, named);
    }
    // Another thread driving progress wakes us when anything moved.
    bool block = false;
    take_turn(lk, deadline, &polled, &start, &block);
  }
}

}  // namespace chorus::engine
