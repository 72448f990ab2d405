// An in-process Transport for N ranks running as threads of one process, for algorithm
// tests: messages are copied through a shared hub, with fault injection.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "transport/transport.h"

namespace chorus::transport::testing {

class FakeHub;

// Per-rank traffic counters (sends posted by this rank).
struct FakeStats {
  std::uint64_t messages_sent = 0;
  std::uint64_t bytes_sent = 0;
};

// One rank's endpoint. Messages are matched by (src, dst, tag) in FIFO order; a send
// with no posted receive is copied into the receiver's unexpected queue and completes at
// once (eager). A receive of a different length than the message fails with kDesync.
// Thread safety: every method may be called from any thread.
class FakeTransport final : public Transport {
 public:
  FakeTransport(std::shared_ptr<FakeHub> hub, int rank);
  ~FakeTransport() override;

  int rank() const override { return rank_; }
  int size() const override;
  std::string name() const override { return "fake"; }
  Result<RequestPtr> post_send(int peer, Tag tag, const void* data, std::size_t bytes) override;
  Result<RequestPtr> post_recv(int peer, Tag tag, void* data, std::size_t bytes) override;
  Status wait(std::span<Request* const> reqs, Deadline deadline) override;
  void abort(const Status& reason) override;

  // Fault injection, affecting the whole world: rank `r` is gone as if its process died.
  // Its peers' pending and future receives from r (not already queued) and sends to r
  // fail with kPeerLost naming r; r's own pending and future requests fail with kAborted.
  void kill_rank(int r);
  // Pretends the ranks sit on hosts: hosts() returns `hosts` (the host of every rank,
  // numbered in order of each host's lowest rank); empty = one host (null).
  void set_hosts(std::vector<int> hosts) { hosts_ = std::move(hosts); }
  const std::vector<int>* hosts() const override { return hosts_.empty() ? nullptr : &hosts_; }
  FakeStats stats() const;
  // Bytes currently held in unexpected queues, all ranks together (for leak checks).
  std::size_t unexpected_bytes() const;

 private:
  std::shared_ptr<FakeHub> hub_;
  int rank_;
  std::vector<int> hosts_;
};

// Builds `n` connected endpoints sharing one hub; element r is rank r.
std::vector<std::unique_ptr<Transport>> make_fake_world(int n);

}  // namespace chorus::transport::testing
