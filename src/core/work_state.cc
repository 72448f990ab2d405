// WorkState: completion, waiting and callbacks of one asynchronous operation.
#include "core/work_state.h"

namespace chorus::core {

std::shared_ptr<WorkState> WorkState::failed(std::int64_t seq, const char* name, Status s) {
  auto w = std::make_shared<WorkState>(seq, name);
  w->complete(std::move(s));
  return w;
}

bool WorkState::finished_locked() const {
  return finished_ || (state_ != State::kPending && completer_ == std::this_thread::get_id());
}

void WorkState::complete(Status s) {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (state_ != State::kPending) return;
    state_ = s.is_ok() ? State::kDone : State::kFailed;
    status_ = std::move(s);
    completer_ = std::this_thread::get_id();
  }
  // Callbacks registered while these run join the queue, so registration order holds.
  std::vector<Callback> cbs;
  std::shared_ptr<WorkState> self;
  for (;;) {
    {
      std::lock_guard<std::mutex> g(mu_);
      if (callbacks_.empty()) {
        finished_ = true;
        completer_ = std::thread::id();
        break;
      }
      cbs.swap(callbacks_);
    }
    if (!self) self = shared_from_this();
    for (auto& cb : cbs) cb(self);
    cbs.clear();
  }
  cv_.notify_all();
}

bool WorkState::is_complete() const {
  std::lock_guard<std::mutex> g(mu_);
  return finished_locked();
}

WorkState::State WorkState::state() const {
  std::lock_guard<std::mutex> g(mu_);
  return state_;
}

Status WorkState::status() const {
  std::lock_guard<std::mutex> g(mu_);
  return status_;
}

bool WorkState::wait_until(std::chrono::steady_clock::time_point deadline) const {
  std::unique_lock<std::mutex> lk(mu_);
  return cv_.wait_until(lk, deadline, [&] { return finished_locked(); });
}

void WorkState::wait() const {
  std::unique_lock<std::mutex> lk(mu_);
  cv_.wait(lk, [&] { return finished_locked(); });
}

void WorkState::on_complete(Callback cb) {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (!finished_) {
      callbacks_.push_back(std::move(cb));
      return;
    }
  }
  cb(shared_from_this());
}

}  // namespace chorus::core
