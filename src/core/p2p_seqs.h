// P2pSeqs: the sequence numbers of point-to-point messages, per (direction, peer, tag):
// each tag (>= 0) of a pair is its own sequence. Thread-safe: a receive from any source
// takes a pair's seq on the any_source worker while the caller issues.
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace chorus::core {

class P2pSeqs {
 public:
  explicit P2pSeqs(int size) : send_(size, 0), recv_(size, 0) {}

  // The next seq of (direction, peer, tag), advanced.
  std::uint64_t next(bool sending, int peer, int tag) {
    std::lock_guard<std::recursive_mutex> g(mu_);
    if (tag == 0) return (sending ? send_ : recv_)[peer]++;
    return (sending ? tagged_send_ : tagged_recv_)[{peer, tag}]++;
  }
  // The seq the next (direction, peer, tag) message will take.
  std::uint64_t peek(bool sending, int peer, int tag) {
    std::lock_guard<std::recursive_mutex> g(mu_);
    if (tag == 0) return (sending ? send_ : recv_)[peer];
    return (sending ? tagged_send_ : tagged_recv_)[{peer, tag}];
  }
  // Held by a receive from any source across peeking at every pair and claiming one
  // (recursive: the claim issues the receive, which takes the pair's seq again).
  std::unique_lock<std::recursive_mutex> lock() { return std::unique_lock(mu_); }
  // The source last chosen by a receive from any source (-1 = none yet); under lock().
  int any_last() const { return any_last_; }
  void set_any_last(int peer) { any_last_ = peer; }

 private:
  std::recursive_mutex mu_;
  std::vector<std::uint64_t> send_;  // per peer, tag 0
  std::vector<std::uint64_t> recv_;
  std::map<std::pair<int, int>, std::uint64_t> tagged_send_;  // (peer, tag != 0)
  std::map<std::pair<int, int>, std::uint64_t> tagged_recv_;
  int any_last_ = -1;  // (mu_)
};

}  // namespace chorus::core
