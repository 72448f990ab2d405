// A transport seen by a group of its ranks: rank i of the view is job rank members[i].
// Algorithms run unchanged within a group (e.g. the ranks of one host, or one rank per
// host); messages keep their tags, so a caller running several groups' phases in one
// operation gives each phase its own tag comm (see algo/hier.cc).
#pragma once
#include <vector>

#include "transport/transport.h"

namespace chorus::transport {

class GroupView final : public Transport {
 public:
  // REQUIRES: members ascending, distinct, in range, and holding base.rank().
  GroupView(Transport& base, std::vector<int> members);

  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(members_.size()); }
  std::string name() const override { return base_.name(); }
  Result<RequestPtr> post_send(int peer, Tag tag, const void* data, std::size_t bytes) override;
  Result<RequestPtr> post_recv(int peer, Tag tag, void* data, std::size_t bytes) override;
  Status wait(std::span<Request* const> reqs, Deadline deadline) override {
    return base_.wait(reqs, deadline);
  }
  Result<int> probe(std::span<const ProbeTarget> targets, Deadline deadline) override;
  void poke() override { base_.poke(); }
  void abort(const Status& reason) override { base_.abort(reason); }
  // The windows the base transport shares among exactly these members, if any.
  SharedWindows* shared_windows() override { return base_.group_windows(members_); }

 private:
  Transport& base_;
  std::vector<int> members_;
  int rank_ = -1;
};

}  // namespace chorus::transport
