// The multi-node agent's link to the job's store: a background thread that tells the other
// nodes about this node (failure, done, leaving) and watches for theirs.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "chorus/store.h"
#include "supervisor.h"

namespace chorus_run {

// Store keys shared by the agents of one multi-node launch (all under "chorus-run/").
inline const std::string kFailedKey = "chorus-run/failed";  // "node\ntext", first failure
inline const std::string kDoneKey = "chorus-run/done";      // counter: nodes whose ranks all exited 0
inline const std::string kLeftKey = "chorus-run/left";      // counter: agents about to exit

// Polls the store every 150 ms on its own connection. No method blocks on the network:
// reports are queued and sent by the thread. The store counts as lost when a call fails
// or none has been answered for kSilence (a dead link blocks a call, it does not fail it).
// Every agent bumps a heartbeat counter at each poll; node 0's watch records a failure of
// any node whose heartbeat stood still for kSilence while the job was running.
class StoreWatch final : public PeerWatch {
 public:
  static constexpr auto kSilence = std::chrono::seconds(10);

  StoreWatch(std::shared_ptr<chorus::Store> store, int node, int nnodes, std::string where);
  ~StoreWatch() override;  // stops the thread; detaches it if a call is stuck

  int wake_fd() const override { return wake_fd_; }
  std::string stop_reason() override;
  void local_failure(const std::string& what) override;

  // This node's ranks all exited 0 / this agent is leaving (queued, sent once).
  void node_done();
  void leaving();
  // Latest counters read from the store (-1 before the first read).
  long long done_count() const { return done_count_; }
  long long left_count() const { return left_count_; }
  // Node 0: nodes whose heartbeat has stood still for kSilence (they will not leave).
  int silent_nodes() const { return silent_nodes_; }
  // True when every queued report has been sent (or the store is lost).
  bool flushed();
  // True once a failure of this node has been queued (by local_failure).
  bool failure_reported();

 private:
  void loop();
  void poll_once();
  void check_heartbeats();
  void wake();

  std::shared_ptr<chorus::Store> store_;
  const int node_;
  const int nnodes_;
  const std::string where_;  // "host:port" of the store, for messages
  int wake_fd_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::string failure_;  // queued local failure ("" = none)
  bool failure_sent_ = false;
  bool done_queued_ = false, done_sent_ = false;
  bool left_queued_ = false, left_sent_ = false;
  std::string remote_;   // another node's failure
  std::string lost_;     // why the store is lost
  std::chrono::steady_clock::time_point last_ok_;
  std::atomic<long long> done_count_{-1}, left_count_{-1};
  std::atomic<bool> in_call_{false};
  std::atomic<int> silent_nodes_{0};
  std::vector<long long> beats_;  // node 0: last heartbeat value seen per node ...
  std::vector<std::chrono::steady_clock::time_point> beat_at_;  // ... and when it changed
  std::thread thread_;
};

}  // namespace chorus_run
