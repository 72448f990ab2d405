// RoutedTransport: per-peer routing to the host's transport or the job-wide one, and a
// wait that drives both.
#include "transport/routed.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <tuple>
#include <thread>
#include <utility>

#include "util/strings.h"

namespace chorus::transport {

namespace {

// A request of one side, remembering which, and for a receive its tag.
class RoutedRequest final : public Request {
 public:
  RoutedRequest(RequestPtr inner, bool near, std::optional<Tag> recv_tag)
      : inner_(std::move(inner)), near_(near), recv_tag_(recv_tag) {}
  bool done() const override { return inner_->done(); }
  Status status() const override { return inner_->status(); }
  Request* inner() const { return inner_.get(); }
  bool near() const { return near_; }
  const std::optional<Tag>& recv_tag() const { return recv_tag_; }

 private:
  RequestPtr inner_;
  bool near_;
  std::optional<Tag> recv_tag_;
};

// True when a side's wait ended only because its slice ran out. Any other failure is
// real, including a kTimeout before the slice's end (e.g. an abort whose cause was a
// peer's timeout).
bool sliced_out(const Status& st, const Deadline& slice) {
  return st.code() == ErrorCode::kTimeout && slice.expired();
}

Result<RequestPtr> wrap(Result<RequestPtr> inner, bool near, std::optional<Tag> recv_tag = {}) {
  if (!inner.has_value()) return std::move(inner).take_status();
  return RequestPtr(std::make_unique<RoutedRequest>(std::move(*inner), near, recv_tag));
}

}  // namespace

// The host's windows as the near transport shares them, with barriers that also watch the
// far part: a rank waiting at a window barrier for a host peer that moved on to another
// operation may only learn it from a message that arrived over TCP (a peer on another
// host ran a different collective), or from an abort there. So the barrier waits in
// slices of kQuietSliceUs and checks the far part in between (a barrier may be entered
// again after a timeout: arriving twice at the same barrier counts once).
class RoutedTransport::HostWindows final : public SharedWindows {
 public:
  HostWindows(SharedWindows& inner, RoutedTransport& owner) : inner_(inner), owner_(owner) {}
  std::size_t window_bytes() const override { return inner_.window_bytes(); }
  void* window(int rank) override { return inner_.window(rank); }
  std::uint64_t barriers() const override { return inner_.barriers(); }
  bool single_copy() const override { return inner_.single_copy(); }
  Status read_peer(int rank, const void* remote, void* local, std::size_t bytes) override {
    return inner_.read_peer(rank, remote, local, bytes);
  }
  Status write_peer(int rank, const void* local, void* remote, std::size_t bytes) override {
    return inner_.write_peer(rank, local, remote, bytes);
  }
  Status barrier(const Tag& tag, Deadline deadline) override {
    return sliced_barrier(tag, deadline, nullptr);
  }
  Status barrier_meanwhile(const Tag& tag, Deadline deadline,
                           util::FunctionRef<void()> meanwhile) override {
    return sliced_barrier(tag, deadline, &meanwhile);
  }

 private:
  // The first slice runs `meanwhile` (when given) after this rank's arrival; the later
  // ones enter the same barrier again.
  Status sliced_barrier(const Tag& tag, Deadline deadline,
                        const util::FunctionRef<void()>* meanwhile) {
    for (;;) {
      const Deadline slice = Deadline::earliest(
          deadline, Deadline(Deadline::Clock::now() + std::chrono::microseconds(kQuietSliceUs)));
      Status st = meanwhile != nullptr ? inner_.barrier_meanwhile(tag, slice, *meanwhile)
                                       : inner_.barrier(tag, slice);
      meanwhile = nullptr;
      if (!sliced_out(st, slice) || deadline.expired()) return st;
      CHORUS_RETURN_IF_ERROR(owner_.far_->disagreement(tag));
      CHORUS_RETURN_IF_ERROR(owner_.adopt_failure());
    }
  }

  SharedWindows& inner_;
  RoutedTransport& owner_;
};

RoutedTransport::~RoutedTransport() = default;

RoutedTransport::RoutedTransport(std::unique_ptr<Transport> near, std::vector<int> near_ranks,
                                 std::unique_ptr<Transport> far, std::vector<int> hosts)
    : near_(std::move(near)), far_(std::move(far)), near_ranks_(std::move(near_ranks)),
      near_of_(static_cast<std::size_t>(far_->size()), -1), hosts_(std::move(hosts)) {
  if (near_ == nullptr) return;  // alone on its host: every peer is far
  for (std::size_t i = 0; i < near_ranks_.size(); ++i)
    near_of_[static_cast<std::size_t>(near_ranks_[i])] = static_cast<int>(i);
  if (SharedWindows* w = near_->shared_windows())
    host_windows_ = std::make_unique<HostWindows>(*w, *this);
}

SharedWindows* RoutedTransport::group_windows(std::span<const int> members) {
  if (near_ == nullptr || !std::equal(members.begin(), members.end(), near_ranks_.begin(),
                                      near_ranks_.end()))
    return nullptr;
  return host_windows_.get();
}

Result<RequestPtr> RoutedTransport::post_send(int peer, Tag tag, const void* data,
                                              std::size_t bytes) {
  CHORUS_RETURN_IF_ERROR(check_post_args("post_send", peer, rank(), size(), data, bytes));
  const int i = near_index(peer);
  if (i >= 0) return wrap(near_->post_send(i, tag, data, bytes), true);
  return wrap(far_->post_send(peer, tag, data, bytes), false);
}

Result<RequestPtr> RoutedTransport::post_recv(int peer, Tag tag, void* data, std::size_t bytes) {
  CHORUS_RETURN_IF_ERROR(check_post_args("post_recv", peer, rank(), size(), data, bytes));
  const int i = near_index(peer);
  // A peer in another operation may have written to the other part instead: wait()
  // checks (cross_check), not every post (it makes progress: a system call per receive).
  Transport& side = i >= 0 ? *near_ : *far_;
  return wrap(side.post_recv(i >= 0 ? i : peer, tag, data, bytes), i >= 0, tag);
}

Status RoutedTransport::failure() const {
  Status f = far_->failure();
  if (f.is_ok() && near_ != nullptr) f = near_->failure();
  return f;
}

Result<int> RoutedTransport::probe(std::span<const ProbeTarget> targets, Deadline deadline) {
  CHORUS_RETURN_IF_ERROR(check_probe_targets("probe", targets, rank(), size()));
  if (near_ == nullptr) return far_->probe(targets, deadline);
  std::vector<ProbeTarget> near, far;   // in each part's numbering
  std::vector<int> near_at, far_at;     // their indices in `targets`
  for (std::size_t k = 0; k < targets.size(); ++k) {
    const int i = near_index(targets[k].peer);
    (i >= 0 ? near : far).push_back(ProbeTarget{i >= 0 ? i : targets[k].peer, targets[k].tag});
    (i >= 0 ? near_at : far_at).push_back(static_cast<int>(k));
  }
  auto on = [](Transport& side, const std::vector<ProbeTarget>& ts, const std::vector<int>& at,
               Deadline d) -> Result<int> {
    Result<int> got = side.probe(ts, d);
    if (!got.has_value()) return got.status();
    return at[static_cast<std::size_t>(*got)];
  };
  if (far.empty()) return on(*near_, near, near_at, deadline);
  if (near.empty()) return on(*far_, far, far_at, deadline);
  // A side whose candidates are all gone (kPeerLost) drops out while the other can still
  // send; the probe fails with it only when both are gone.
  Status gone[2];
  for (;;) {
    int k = 0;
    for (auto [side, ts, at] : {std::tuple{near_.get(), &near, &near_at},
                                std::tuple{far_.get(), &far, &far_at}}) {
      if (!gone[k++].is_ok()) continue;
      const Deadline slice = Deadline::earliest(
          deadline, Deadline(Deadline::Clock::now() + std::chrono::microseconds(kProbeSliceUs)));
      Result<int> got = on(*side, *ts, *at, slice);
      if (got.has_value()) return got;
      if (got.status().code() == ErrorCode::kPeerLost) {
        gone[k - 1] = got.status();
        if (!gone[0].is_ok() && !gone[1].is_ok()) return gone[k - 1];
        continue;
      }
      if (!sliced_out(got.status(), slice)) return got.status();
      CHORUS_RETURN_IF_ERROR(adopt_failure());
      if (deadline.expired()) return probe_timeout(rank(), targets);
    }
  }
}

Status RoutedTransport::failure_for(std::uint64_t seq) const {
  Status f = far_->failure_for(seq);
  if (f.is_ok() && near_ != nullptr) f = near_->failure_for(seq);
  return f;
}

Status RoutedTransport::adopt_failure() {
  if (near_ == nullptr) return Status::ok();  // one part: nothing to pass on
  for (auto [from, to] : {std::pair{near_.get(), far_.get()}, {far_.get(), near_.get()}}) {
    Status f = from->failure();
    if (f.is_ok()) continue;
    to->abort(f);
    return f;
  }
  return Status::ok();
}

Status RoutedTransport::cross_check(std::span<Request* const> reqs) {
  for (Request* q : reqs) {
    const auto* r = static_cast<const RoutedRequest*>(q);
    if (r == nullptr || r->done() || !r->recv_tag()) continue;
    CHORUS_RETURN_IF_ERROR(near_->disagreement(*r->recv_tag()));
    CHORUS_RETURN_IF_ERROR(far_->disagreement(*r->recv_tag()));
  }
  return Status::ok();
}

std::optional<Status> RoutedTransport::wait_together(std::span<Request* const> reqs,
                                                     const std::vector<Request*>& near,
                                                     const std::vector<Request*>& far,
                                                     Deadline deadline) {
  const int bell = near_->event_fd();
  if (bell < 0) return std::nullopt;
  // Done requests so far; a failure ends the wait.
  auto settle = [&](std::size_t& done) -> std::optional<Status> {
    done = 0;
    for (const std::vector<Request*>* side : {&near, &far})
      for (Request* r : *side) {
        if (!r->done()) continue;
        Status st = r->status();
        if (!st.is_ok()) return st;
        ++done;
      }
    if (done == near.size() + far.size()) return Status::ok();
    return std::nullopt;
  };
  using Clock = Deadline::Clock;
  auto busy_until = Clock::now() + std::chrono::microseconds(kBusyUs);
  auto next_check = Clock::now() + std::chrono::microseconds(kQuietSliceUs);
  std::size_t seen = 0, done = 0;
  for (;;) {
    if (std::optional<Status> end = settle(done)) return end;
    if (done != seen) {  // progress: poll busily again for a while
      seen = done;
      busy_until = Clock::now() + std::chrono::microseconds(kBusyUs);
    }
    CHORUS_RETURN_IF_ERROR(adopt_failure());
    if (deadline.expired()) {  // the side still waiting words the timeout
      const Deadline now(Clock::now());
      for (auto [side, rs] : {std::pair{near_.get(), &near}, {far_.get(), &far}})
        for (Request* r : *rs)
          if (!r->done()) return side->wait(*rs, now);
      continue;
    }
    if (Clock::now() >= next_check) {
      CHORUS_RETURN_IF_ERROR(cross_check(reqs));
      next_check = Clock::now() + std::chrono::microseconds(kQuietSliceUs);
    }
    near_->poke();
    far_->poke();
    if (Clock::now() < busy_until) {
      std::this_thread::yield();
      continue;
    }
    // Block on both at once: arm the bell, look once more (news that came before arming
    // rang no bell), then wait on the sockets and the bell together.
    near_->arm_events(true);
    near_->poke();
    std::size_t now_done = 0;
    const bool news = settle(now_done).has_value() || now_done != seen;
    const Deadline until = Deadline::earliest(
        deadline, Deadline(Clock::now() + std::chrono::microseconds(kQuietSliceUs)));
    const bool blocked = news || far_->block(until, bell);
    near_->arm_events(false);
    if (!blocked) return std::nullopt;  // the far side cannot block so: take turns
  }
}

Status RoutedTransport::wait(std::span<Request* const> reqs, Deadline deadline) {
  // Per waiting thread, reused: no allocation per wait once warm.
  thread_local std::vector<Request*> near, far;
  near.clear();
  far.clear();
  for (std::size_t k = 0; k < reqs.size(); ++k) {
    if (reqs[k] == nullptr) continue;
    auto* r = dynamic_cast<RoutedRequest*>(reqs[k]);
    if (r == nullptr)
      return invalid_argument(str_printf("wait: request %zu does not belong to this transport", k));
    (r->near() ? near : far).push_back(r->inner());
  }
  if (near_ == nullptr) return far_->wait(far, deadline);  // alone on its host
  // Each side waits a slice at a time (its own deadline checks, liveness and abort
  // handling included); in between, the other side makes what progress it can, since
  // requests of it that nobody waits for now (e.g. the send of a ring step whose receive
  // is waited for) must still move. A side that completes is done. When only one side has
  // pending work (a phase of a hierarchical algorithm within the host or across hosts),
  // it waits on its own events in long slices: the other is only looked at for a peer
  // that moved to another operation (cross_check).
  const bool quiet = (near.empty() && near_->idle()) || (far.empty() && far_->idle());
  if (!quiet)
    if (std::optional<Status> st = wait_together(reqs, near, far, deadline)) return *st;
  const auto slice_len = std::chrono::microseconds(quiet ? kQuietSliceUs : kSliceUs);
  auto next_check = Deadline::Clock::now() + std::chrono::microseconds(kQuietSliceUs);
  bool near_done = near.empty(), far_done = far.empty();
  for (;;) {
    const Deadline slice =
        Deadline::earliest(deadline, Deadline(Deadline::Clock::now() + slice_len));
    // One side's turn: false (with `failure` set) when the wait must end.
    Status failure;
    auto turn = [&](Transport& side, const std::vector<Request*>& reqs, bool& done) {
      if (done) {
        side.poke();
        return true;
      }
      Status st = side.wait(reqs, slice);
      if (st.is_ok()) done = true;
      else if (!sliced_out(st, slice) || deadline.expired()) failure = std::move(st);
      return failure.is_ok();
    };
    if (!turn(*near_, near, near_done) || !turn(*far_, far, far_done)) return failure;
    if (near_done && far_done) return Status::ok();
    // A part that aborted (a peer's abort frame, a lost peer) takes the other along, so
    // waits on either end within the bound.
    CHORUS_RETURN_IF_ERROR(adopt_failure());
    if (Deadline::Clock::now() >= next_check) {
      CHORUS_RETURN_IF_ERROR(cross_check(reqs));
      next_check = Deadline::Clock::now() + std::chrono::microseconds(kQuietSliceUs);
    }
  }
}

void RoutedTransport::abort(const Status& reason) {
  if (near_) near_->abort(reason);
  far_->abort(reason);
}

void RoutedTransport::set_progress(std::uint64_t last_done_seq) {
  if (near_) near_->set_progress(last_done_seq);
  far_->set_progress(last_done_seq);
}

std::int64_t RoutedTransport::peer_progress(int peer) const {
  if (peer < 0 || peer >= size()) return -1;
  const int i = near_index(peer);
  return i >= 0 ? near_->peer_progress(i) : far_->peer_progress(peer);  // i >= 0: near_ set
}

}  // namespace chorus::transport
