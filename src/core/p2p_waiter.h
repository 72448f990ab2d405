// P2pWaiter: completes a communicator's asynchronous sends and receives. A stream posts the
// transport request of a send_async/recv_async and hands it here, then moves on to its next
// operation, so a receive posted first never holds back a later send (each rank receiving
// from its peer before sending to it is safe). One thread per communicator (started on the
// first request) waits on every request in flight and reports each as it finishes.
#pragma once
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "transport/transport.h"
#include "util/deadline.h"
#include "util/status.h"

namespace chorus::core {

class P2pWaiter {
 public:
  // Called once per request, on the waiter's thread, with its outcome: OK, the transport's
  // failure, or (past `deadline`) the transport's kTimeout naming the peer. It may add
  // requests; it must not throw.
  using Done = std::function<void(Status)>;

  explicit P2pWaiter(transport::Transport& t) : t_(t) {}
  ~P2pWaiter() { stop(); }
  P2pWaiter(const P2pWaiter&) = delete;
  P2pWaiter& operator=(const P2pWaiter&) = delete;

  // Takes over `req` (already posted): `done` runs when it finishes. Thread-safe.
  void add(transport::RequestPtr req, Deadline deadline, Done done);
  // Requests added and not yet reported (their `done` not yet returned).
  std::size_t in_flight() const;
  // Blocks until in_flight() == 0 (bounded by the requests' deadlines).
  void wait_idle();
  // Reports what is still in flight as it finishes (abort the transport first to make
  // that prompt), then joins the thread. Idempotent; add() after stop() is a bug.
  void stop();

 private:
  struct Item {
    transport::RequestPtr req;
    Deadline deadline;
    Done done;
  };
  void loop();
  // One wait over the items (at most `slice`), then reports the finished ones.
  void wait_round(std::unique_lock<std::mutex>& lk);

  transport::Transport& t_;
  mutable std::mutex mu_;
  std::condition_variable cv_;       // loop(): items arrived / stop
  std::condition_variable idle_cv_;  // wait_idle(): nothing in flight
  std::vector<Item> items_;
  std::size_t reporting_ = 0;  // items taken out whose `done` is running
  std::chrono::microseconds round_{1000};  // grows while nothing changes (wait_round)
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace chorus::core
