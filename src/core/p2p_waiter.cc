// P2pWaiter: one thread waits on all of a communicator's asynchronous transfers in short
// rounds (the transport's wait returns when all of them are done or the round ends), so a
// transfer that finishes while an older one is still pending is reported within a round.
// A round that changes nothing doubles the next one (1 ms up to 8 ms): a receive pending
// for long costs ~125 wake-ups a second, not 1000 (each wake-up also restarts the shared-
// memory transport's polling phase).
#include "core/p2p_waiter.h"

#include <algorithm>
#include <chrono>

namespace chorus::core {

namespace {
// Rounds: the longest a finished transfer waits to be reported while an older one is still
// pending (also how soon a transfer added during a round joins the next one).
constexpr std::chrono::microseconds kFirstRound{1000};
constexpr std::chrono::microseconds kLongestRound{8000};
}  // namespace

void P2pWaiter::add(transport::RequestPtr req, Deadline deadline, Done done) {
  std::lock_guard<std::mutex> g(mu_);
  items_.push_back(Item{std::move(req), deadline, std::move(done)});
  round_ = kFirstRound;
  if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
  cv_.notify_one();
}

std::size_t P2pWaiter::in_flight() const {
  std::lock_guard<std::mutex> g(mu_);
  return items_.size() + reporting_;
}

void P2pWaiter::wait_idle() {
  std::unique_lock<std::mutex> lk(mu_);
  idle_cv_.wait(lk, [&] { return items_.empty() && reporting_ == 0; });
}

void P2pWaiter::stop() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stopping_ = true;
    cv_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
}

void P2pWaiter::loop() {
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    cv_.wait(lk, [&] { return stopping_ || !items_.empty(); });
    if (items_.empty()) return;  // stopping, nothing left
    wait_round(lk);
  }
}

void P2pWaiter::wait_round(std::unique_lock<std::mutex>& lk) {
  // Only this thread removes items, so the pointers stay valid while unlocked.
  std::vector<transport::Request*> reqs;
  Deadline first = Deadline::never();
  for (const Item& it : items_) {
    reqs.push_back(it.req.get());
    first = Deadline::earliest(first, it.deadline);
  }
  const std::size_t before = items_.size();
  const auto round = Deadline(Deadline::Clock::now() + round_);
  lk.unlock();
  (void)t_.wait(reqs, Deadline::earliest(first, round));
  const Status broken = t_.failure();
  lk.lock();
  std::vector<std::pair<Item, Status>> finished;
  for (std::size_t i = 0; i < items_.size();) {
    Item& it = items_[i];
    Status s;
    if (it.req->done()) {
      s = it.req->status();
    } else if (!broken.is_ok()) {
      s = broken;
    } else if (it.deadline.expired()) {
      s = transport::wait_one(t_, it.req.get(), it.deadline);  // the transport's kTimeout
      if (s.is_ok() && !it.req->done()) s = timeout_error("deadline passed");
    } else {
      ++i;
      continue;
    }
    finished.emplace_back(std::move(it), std::move(s));
    items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(i));
  }
  if (finished.empty()) {
    if (items_.size() == before) round_ = std::min(round_ * 2, kLongestRound);
    return;
  }
  round_ = kFirstRound;
  reporting_ += finished.size();
  lk.unlock();
  for (auto& [it, s] : finished) {
    it.req.reset();  // cancelled if still pending: the buffer goes back to the caller
    it.done(std::move(s));
  }
  lk.lock();
  reporting_ -= finished.size();
  if (items_.empty() && reporting_ == 0) idle_cv_.notify_all();
}

}  // namespace chorus::core
