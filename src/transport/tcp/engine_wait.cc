// TCP engine wait loop: one waiting thread polls every peer socket (lock released while in
// poll()), the others sleep on a condition variable; deadline and abort checks. The polling
// thread first busy-waits (spin, then yield; see spin_policy.h), then blocks in poll().
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

#include "transport/tcp/engine.h"
#include "util/strings.h"

namespace chorus::tcp {

void Engine::wake() {
  std::uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(wake_fd_.get(), &one, sizeof(one));
}

Status Engine::timeout_status(std::span<Op* const> ops) const {
  for (Op* op : ops) {
    if (op == nullptr || op->done.load(std::memory_order_acquire)) continue;
    const Peer& p = peers_[op->peer];
    return Status(ErrorCode::kTimeout,
                  str_printf("deadline passed waiting for %s %s peer rank %d (%s), tag comm %u "
                             "seq %llu step %u, %zu bytes",
                             op->kind == Op::Kind::kSend ? "send" : "recv",
                             op->kind == Op::Kind::kSend ? "to" : "from", op->peer,
                             p.address.c_str(), op->tag.comm,
                             static_cast<unsigned long long>(op->tag.seq), op->tag.step, op->bytes),
                  op->peer, static_cast<std::int64_t>(op->tag.seq));
  }
  return timeout_error("deadline passed");
}

Status Engine::wait(std::span<Op* const> ops, Deadline deadline) {
  std::unique_lock<std::mutex> lk(mu_);
  if (!spin_) {
    std::vector<std::string> addresses;
    for (const Peer& p : peers_) addresses.push_back(p.address);
    spin_.emplace(spin_us_, addresses, rank_);
  }
  bool polled = false;   // this thread drove progress during this wait
  bool blocked = false;  // ... and reached the blocking phase
  SpinPolicy::Clock::time_point start{};
  for (;;) {
    if (aborted()) {
      bool all_ok = std::all_of(ops.begin(), ops.end(), [](Op* op) {
        return op == nullptr || (op->done.load(std::memory_order_acquire) && op->status.is_ok());
      });
      return all_ok ? Status::ok() : abort_status();
    }
    bool all_done = true;
    for (Op* op : ops) {
      if (op == nullptr) continue;
      if (!op->done.load(std::memory_order_acquire)) {
        all_done = false;
      } else if (!op->status.is_ok()) {
        return op->status;
      }
    }
    if (all_done) {
      if (polled) {
        spin_->record(blocked);
        cv_.notify_all();  // another waiter may take over polling
      }
      return Status::ok();
    }
    if (deadline.expired()) return timeout_status(ops);
    if (!polling_) {
      polling_ = true;
      SpinPolicy::Phase phase = SpinPolicy::Phase::kBlock;
      if (spin_->enabled()) {
        auto now = SpinPolicy::Clock::now();
        if (!polled) start = now;
        phase = spin_->phase(start, now);
      }
      polled = true;
      blocked = blocked || phase == SpinPolicy::Phase::kBlock;
      const bool progressed = progress_round(lk, deadline, phase);
      polling_ = false;
      // Busy rounds that found nothing leave the other waiters asleep.
      if (progressed || phase == SpinPolicy::Phase::kBlock) cv_.notify_all();
    } else {
      auto until = Deadline::earliest(deadline, Deadline::after(std::chrono::milliseconds(10)));
      cv_.wait_until(lk, until.at());
    }
  }
}

void Engine::poke() {
  std::unique_lock<std::mutex> lk(mu_);
  if (polling_ || aborted()) return;
  polling_ = true;
  const bool progressed = progress_round(lk, Deadline(SpinPolicy::Clock::now()),
                                         SpinPolicy::Phase::kSpin);
  polling_ = false;
  if (progressed) cv_.notify_all();
}

bool Engine::progress_round(std::unique_lock<std::mutex>& lk, Deadline deadline,
                            SpinPolicy::Phase phase) {
  pfds_.clear();
  pfd_peer_.clear();
  pfds_.push_back(pollfd{wake_fd_.get(), POLLIN, 0});
  pfd_peer_.push_back(-1);
  for (Peer& p : peers_) {
    if (p.rank == rank_ || p.is_failed() || !p.fd.valid()) continue;
    short events = POLLIN;
    if (!p.out.empty()) events |= POLLOUT;
    pfds_.push_back(pollfd{p.fd.get(), events, 0});
    pfd_peer_.push_back(p.rank);
  }
  // pfds_ belongs to the polling thread alone, so it may be used with the lock released.
  lk.unlock();
  const bool busy = phase != SpinPolicy::Phase::kBlock;
  // Blocking: up to the deadline (at most 50 ms, for liveness and abort re-checks), to the
  // microsecond, so a caller waiting in slices (transport::RoutedTransport) gets its turn
  // back on time.
  const long us = busy ? 0 : deadline.remaining_us(50000);
  const timespec ts{us / 1000000, (us % 1000000) * 1000};
  int n = ::ppoll(pfds_.data(), pfds_.size(), &ts, nullptr);
  if (n == 0 && phase == SpinPolicy::Phase::kSpin) SpinPolicy::cpu_relax();
  if (n == 0 && phase == SpinPolicy::Phase::kYield) ::sched_yield();
  lk.lock();
  if (n <= 0 || aborted()) return n != 0;
  if (pfds_[0].revents & POLLIN) {
    std::uint64_t v;
    [[maybe_unused]] ssize_t r = ::read(wake_fd_.get(), &v, sizeof(v));
  }
  for (std::size_t i = 1; i < pfds_.size() && !aborted(); ++i) {
    Peer& p = peers_[pfd_peer_[i]];
    if (p.is_failed()) continue;
    if (pfds_[i].revents & (POLLIN | POLLERR | POLLHUP)) read_peer(p);
    if (!p.is_failed() && !p.out.empty()) write_peer(p);
  }
  return true;
}

}  // namespace chorus::tcp

namespace chorus::tcp {

namespace {
constexpr int kLingerMs = 200;  // upper bound a closing rank waits for its peers' FIN
}  // namespace

void Engine::linger_close(std::unique_lock<std::mutex>& lk) {
  if (aborted()) return flush_after_abort(lk);
  const Deadline limit = Deadline::after(std::chrono::milliseconds(kLingerMs));
  // A bye tells each peer how far this rank got (its last completed seq), for the
  // message a peer that still needs us will report.
  for (Peer& p : peers_)
    if (p.rank != rank_ && !p.is_failed() && p.fd.valid())
      queue_control(p, FrameKind::kBye, transport::Tag{}, 0, 0);
  bool half_closed = false;
  std::vector<pollfd> pfds;
  std::vector<int> who;
  for (;;) {
    bool flushing = false;
    for (Peer& p : peers_) {
      if (p.rank == rank_ || p.is_failed() || !p.fd.valid()) continue;
      if (!p.out.empty()) write_peer(p);
      flushing = flushing || (!p.is_failed() && !p.out.empty());
    }
    if (!flushing && !half_closed) {
      for (Peer& p : peers_)
        if (p.rank != rank_ && !p.is_failed() && p.fd.valid()) ::shutdown(p.fd.get(), SHUT_WR);
      half_closed = true;
    }
    pfds.clear();
    who.clear();
    for (Peer& p : peers_) {
      if (p.rank == rank_ || p.is_failed() || !p.fd.valid()) continue;
      pfds.push_back(pollfd{p.fd.get(), static_cast<short>(POLLIN | (p.out.empty() ? 0 : POLLOUT)), 0});
      who.push_back(p.rank);
    }
    if (pfds.empty() || limit.expired()) return;
    lk.unlock();
    int n = ::poll(pfds.data(), pfds.size(), limit.remaining_ms(kLingerMs));
    lk.lock();
    if (n <= 0) return;
    for (std::size_t i = 0; i < pfds.size(); ++i)
      if (pfds[i].revents & (POLLIN | POLLERR | POLLHUP)) read_peer(peers_[who[i]]);
  }
}

}  // namespace chorus::tcp
