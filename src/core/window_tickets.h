// WindowTickets: the turn order of operations that use the transport's shared windows
// (algo::Choice::uses_windows). There is one set of windows and one counting barrier per
// communicator, so such operations must run one at a time and in the same order on every
// rank, whatever stream they are on: each takes a ticket when it is issued (program
// order, identical on every rank) and runs only when every earlier ticket is released.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <set>

#include "util/deadline.h"

namespace chorus::core {

class WindowTickets {
 public:
  enum class Wait { kTurn, kTimeout, kStopped };

  // The next ticket (issuing thread).
  std::uint64_t take();
  // Blocks until every ticket before `ticket` is released. kTimeout at `deadline`;
  // kStopped once stop() was called. Sleeps on a condition variable.
  Wait wait_turn(std::uint64_t ticket, Deadline deadline);
  // Ends `ticket` (whether it ran or not); releasing out of order is allowed (an
  // operation refused without running), the turn still passes in ticket order.
  void release(std::uint64_t ticket);
  // Wakes every waiter with kStopped, now and later (abort).
  void stop();

 private:
  // take() and a wait_turn() whose turn has come touch only the atomics (one thread per
  // stream runs operations; the common case is one ticket at a time); release() locks,
  // and wakes only when a thread sleeps in wait_turn().
  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<std::uint64_t> next_{0};     // next ticket to hand out
  std::atomic<std::uint64_t> serving_{0};  // lowest ticket not yet released (written under mu_)
  std::set<std::uint64_t> released_early_;
  std::atomic<bool> stopped_{false};       // written under mu_
  int sleepers_ = 0;                       // threads in cv_.wait (under mu_)
};

}  // namespace chorus::core
