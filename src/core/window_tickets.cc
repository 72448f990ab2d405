// WindowTickets: ticket order for the operations that share the windows.
#include "core/window_tickets.h"

namespace chorus::core {

std::uint64_t WindowTickets::take() {
  std::lock_guard<std::mutex> g(mu_);
  return next_++;
}

WindowTickets::Wait WindowTickets::wait_turn(std::uint64_t ticket, Deadline deadline) {
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    if (stopped_) return Wait::kStopped;
    if (serving_ == ticket) return Wait::kTurn;
    if (deadline.expired()) return Wait::kTimeout;
    if (deadline.is_never())
      cv_.wait(lk);
    else
      cv_.wait_until(lk, deadline.at());
  }
}

void WindowTickets::release(std::uint64_t ticket) {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (ticket != serving_) {
      released_early_.insert(ticket);
      return;
    }
    ++serving_;
    while (!released_early_.empty() && *released_early_.begin() == serving_) {
      released_early_.erase(released_early_.begin());
      ++serving_;
    }
  }
  cv_.notify_all();
}

void WindowTickets::stop() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stopped_ = true;
  }
  cv_.notify_all();
}

}  // namespace chorus::core
