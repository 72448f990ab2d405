// A transport made of two: messages to the ranks of this host go through a transport among
// them (shared memory), messages to every other rank through a transport among all ranks
// (TCP). Algorithms see one transport of the whole job.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "transport/transport.h"

namespace chorus::transport {

class RoutedTransport final : public Transport {
 public:
  // `near` runs among the ranks `near_ranks` (job ranks, ascending; its rank i is job rank
  // near_ranks[i], and it names peers by job rank); `far` among all ranks of the job.
  // `near` may be null for a rank alone on its host (near_ranks = {this rank}): then
  // everything goes through `far`, and the transport still tells hosts().
  // REQUIRES: this rank is in near_ranks; near->size() == near_ranks.size().
  // `hosts`: the host of every rank (Transport::hosts()).
  RoutedTransport(std::unique_ptr<Transport> near, std::vector<int> near_ranks,
                  std::unique_ptr<Transport> far, std::vector<int> hosts);
  ~RoutedTransport() override;

  int rank() const override { return far_->rank(); }
  int size() const override { return far_->size(); }
  std::string name() const override {
    return near_ ? near_->name() + "+" + far_->name() : far_->name();
  }
  Result<RequestPtr> post_send(int peer, Tag tag, const void* data, std::size_t bytes) override;
  Result<RequestPtr> post_recv(int peer, Tag tag, void* data, std::size_t bytes) override;
  // When only one side has pending work, it waits on its own events in slices of
  // kQuietSliceUs (the other is poked in between). When both have, one loop drives both
  // (wait_together): non-blocking rounds of each, yield polling for kBusyUs after the last
  // progress, then one blocking wait on the TCP side's sockets and the shm side's bell
  // together (Transport::event_fd / block); without a bell the sides take turns in slices
  // of kSliceUs. Every kQuietSliceUs, pending receives are checked against both sides'
  // held messages (Transport::disagreement).
  Status wait(std::span<Request* const> reqs, Deadline deadline) override;
  // Targets on one side: that side's probe. On both: each side probes in turn for
  // kProbeSliceUs (the side's own blocking wait), until one finds a message.
  Result<int> probe(std::span<const ProbeTarget> targets, Deadline deadline) override;
  void abort(const Status& reason) override;
  Status failure() const override;
  Status failure_for(std::uint64_t seq) const override;
  void poke() override {
    if (near_) near_->poke();
    far_->poke();
  }
  void set_progress(std::uint64_t last_done_seq) override;
  std::int64_t peer_progress(int peer) const override;
  // No shared windows among all ranks (they would have to span hosts); the ranks of this
  // host (exactly near_ranks) share the near transport's.
  SharedWindows* shared_windows() override { return nullptr; }
  // (wrapped: a barrier there also watches the other part, see HostWindows in routed.cc).
  SharedWindows* group_windows(std::span<const int> members) override;
  const std::vector<int>* hosts() const override { return &hosts_; }

  static constexpr int kSliceUs = 50;
  static constexpr int kQuietSliceUs = 10000;
  static constexpr int kBusyUs = 50;
  static constexpr int kProbeSliceUs = 500;

 private:
  // kDesync when a pending receive of `reqs` has a disagreeing message in either part.
  Status cross_check(std::span<Request* const> reqs);
  // Both sides have pending requests (inner ones: near, far): one loop, no turns.
  // Null when the sides cannot be waited on together (then: take turns).
  std::optional<Status> wait_together(std::span<Request* const> reqs,
                                      const std::vector<Request*>& near,
                                      const std::vector<Request*>& far, Deadline deadline);
  // The failure of a part that aborted, after aborting the other part with it; else OK.
  Status adopt_failure();
  // near's rank of job rank `peer`, or -1 when `peer` is on another host.
  int near_index(int peer) const { return near_of_[static_cast<std::size_t>(peer)]; }

  class HostWindows;
  std::unique_ptr<Transport> near_;
  std::unique_ptr<Transport> far_;
  std::unique_ptr<HostWindows> host_windows_;  // near's windows, when it has some
  std::vector<int> near_ranks_;
  std::vector<int> near_of_;  // per job rank
  std::vector<int> hosts_;    // per job rank
};

}  // namespace chorus::transport
