// WindowTickets: ticket order for the operations that share the windows.
#include "core/window_tickets.h"

namespace chorus::core {

std::uint64_t WindowTickets::take() { return next_.fetch_add(1, std::memory_order_relaxed); }

WindowTickets::Wait WindowTickets::wait_turn(std::uint64_t ticket, Deadline deadline) {
  if (!stopped_.load(std::memory_order_acquire) &&
      serving_.load(std::memory_order_acquire) == ticket)
    return Wait::kTurn;
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    if (stopped_.load(std::memory_order_relaxed)) return Wait::kStopped;
    if (serving_.load(std::memory_order_relaxed) == ticket) return Wait::kTurn;
    if (deadline.expired()) return Wait::kTimeout;
    ++sleepers_;
    if (deadline.is_never())
      cv_.wait(lk);
    else
      cv_.wait_until(lk, deadline.at());
    --sleepers_;
  }
}

void WindowTickets::release(std::uint64_t ticket) {
  bool wake = false;
  {
    std::lock_guard<std::mutex> g(mu_);
    std::uint64_t serving = serving_.load(std::memory_order_relaxed);
    if (ticket != serving) {
      released_early_.insert(ticket);
      return;
    }
    ++serving;
    while (!released_early_.empty() && *released_early_.begin() == serving) {
      released_early_.erase(released_early_.begin());
      ++serving;
    }
    serving_.store(serving, std::memory_order_release);
    wake = sleepers_ > 0;
  }
  if (wake) cv_.notify_all();
}

void WindowTickets::stop() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stopped_.store(true, std::memory_order_release);
  }
  cv_.notify_all();
}

}  // namespace chorus::core
