// TCP progress rounds for the engine's wait loop: one poll over every peer socket and the
// wake-up eventfd (lock released while in poll()), then reads and writes where ready; and
// the graceful close.
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

bool Engine::progress(std::unique_lock<std::mutex>& lk, Deadline deadline, bool block) {
  pfds_.clear();
  pfd_peer_.clear();
  pfds_.push_back(pollfd{wake_fd_.get(), POLLIN, 0});
  pfd_peer_.push_back(-1);
  if (block && also_fd_ >= 0) {  // block(): the other medium's events end the wait too
    pfds_.push_back(pollfd{also_fd_, POLLIN, 0});
    pfd_peer_.push_back(-1);
  }
  for (Peer& p : peers_) {
    if (p.rank == rank_ || p.is_failed() || !p.fd.valid()) continue;
    short events = POLLIN;
    if (!p.out.empty()) events |= POLLOUT;
    pfds_.push_back(pollfd{p.fd.get(), events, 0});
    pfd_peer_.push_back(p.rank);
  }
  // pfds_ belongs to the polling thread alone, so it may be used with the lock released.
  lk.unlock();
  // Blocking: up to the deadline (at most 50 ms, for abort re-checks), to the microsecond,
  // so a caller waiting in slices (transport::RoutedTransport) gets its turn back on time.
  const long us = block ? deadline.remaining_us(50000) : 0;
  const timespec ts{us / 1000000, (us % 1000000) * 1000};
  int n = ::ppoll(pfds_.data(), pfds_.size(), &ts, nullptr);
  lk.lock();
  if (n <= 0 || aborted()) return n != 0;
  if (pfds_[0].revents & POLLIN) {
    std::uint64_t v;
    [[maybe_unused]] ssize_t r = ::read(wake_fd_.get(), &v, sizeof(v));
  }
  for (std::size_t i = 1; i < pfds_.size() && !aborted(); ++i) {
    if (pfd_peer_[i] < 0) continue;  // also_fd_: its owner reads it
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
