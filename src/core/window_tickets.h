// WindowTickets: the turn order of operations that use the transport's shared windows
// (algo::Choice::uses_windows). There is one set of windows and one counting barrier per
// communicator, so such operations must run one at a time and in the same order on every
// rank, whatever stream they are on: each takes a ticket when it is issued (program
// order, identical on every rank) and runs only when every earlier ticket is released.
#pragma once
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
  std::mutex mu_;
  std::condition_variable cv_;
  std::uint64_t next_ = 0;     // next ticket to hand out
  std::uint64_t serving_ = 0;  // lowest ticket not yet released
  std::set<std::uint64_t> released_early_;
  bool stopped_ = false;
};

}  // namespace chorus::core
