// FakeTransport: N ranks in one process exchange messages through a mutex-guarded hub
// (posted receives + unexpected queue per (src, dst, tag)), with abort and kill_rank.
#include "transport/testing/fake_transport.h"

#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

namespace chorus::transport::testing {

namespace {

struct Key {
  int src, dst;
  std::uint32_t comm;
  std::uint64_t seq;
  std::uint32_t step;
  bool operator<(const Key& o) const {
    return std::tie(src, dst, comm, seq, step) < std::tie(o.src, o.dst, o.comm, o.seq, o.step);
  }
};

Key make_key(int src, int dst, Tag t) { return Key{src, dst, t.comm, t.seq, t.step}; }

std::string tag_text(const Key& k) {
  return "tag {comm " + std::to_string(k.comm) + ", seq " + std::to_string(k.seq) + ", step " +
         std::to_string(k.step) + "}";
}

}  // namespace

class FakeRequest;

class FakeHub {
 public:
  explicit FakeHub(int n) : n(n), dead(n, false), aborted(n), stats(n) {}
  // Completes `r` with `s` (OK or failure). REQUIRES: mu held.
  void complete(FakeRequest* r, Status s);
  // Removes and fails every posted receive for which pred(key) gives a non-OK status.
  template <class Pred>
  void fail_posted(Pred pred);

  std::mutex mu;
  std::condition_variable cv;
  const int n;
  std::vector<bool> dead;
  std::vector<Status> aborted;  // OK = not aborted
  std::map<Key, std::deque<FakeRequest*>> posted;
  std::map<Key, std::deque<std::vector<char>>> unexpected;
  std::size_t unexpected_bytes = 0;
  std::vector<FakeStats> stats;
};

class FakeRequest final : public Request {
 public:
  FakeRequest(std::shared_ptr<FakeHub> hub, Key key, void* data, std::size_t bytes)
      : hub_(std::move(hub)), key(key), data(data), bytes(bytes) {}
  ~FakeRequest() override {
    if (!posted_) return;  // set once before the request is handed out; never locked here
    std::lock_guard<std::mutex> lock(hub_->mu);
    if (posted_ && !done_) {
      auto it = hub_->posted.find(key);
      if (it != hub_->posted.end()) {
        std::erase(it->second, this);
        if (it->second.empty()) hub_->posted.erase(it);
      }
    }
  }
  bool done() const override {
    std::lock_guard<std::mutex> lock(hub_->mu);
    return done_;
  }
  Status status() const override {
    std::lock_guard<std::mutex> lock(hub_->mu);
    return status_;
  }

  std::shared_ptr<FakeHub> hub_;
  const Key key;
  void* const data;
  const std::size_t bytes;
  // Guarded by hub_->mu.
  bool posted_ = false;
  bool done_ = false;
  Status status_;
};

void FakeHub::complete(FakeRequest* r, Status s) {
  r->done_ = true;
  r->status_ = std::move(s);
}

template <class Pred>
void FakeHub::fail_posted(Pred pred) {
  for (auto it = posted.begin(); it != posted.end();) {
    Status s = pred(it->first);
    if (s.is_ok()) {
      ++it;
      continue;
    }
    for (FakeRequest* r : it->second) complete(r, s);
    it = posted.erase(it);
  }
}

namespace {

Status peer_lost(int peer) {
  return Status(ErrorCode::kPeerLost, "fake transport: rank " + std::to_string(peer) + " is gone",
                peer);
}

Status self_status(FakeHub& h, int rank) {
  if (!h.aborted[rank].is_ok()) return h.aborted[rank];
  if (h.dead[rank]) return Status(ErrorCode::kAborted, "fake transport: this rank was killed");
  return Status();
}

// Copies `msg` into the receive `r` and completes it (kDesync on a length mismatch).
void deliver(FakeHub& h, FakeRequest* r, const void* msg, std::size_t bytes) {
  if (bytes != r->bytes) {
    h.complete(r, Status(ErrorCode::kDesync,
                         "fake transport: message of " + std::to_string(bytes) +
                             " bytes from rank " + std::to_string(r->key.src) + " under " +
                             tag_text(r->key) + ", receiver expected " + std::to_string(r->bytes),
                         r->key.src));
    return;
  }
  if (bytes) std::memcpy(r->data, msg, bytes);
  h.complete(r, Status());
}

}  // namespace

FakeTransport::FakeTransport(std::shared_ptr<FakeHub> hub, int rank)
    : hub_(std::move(hub)), rank_(rank) {}

FakeTransport::~FakeTransport() = default;

int FakeTransport::size() const { return hub_->n; }

Result<RequestPtr> FakeTransport::post_send(int peer, Tag tag, const void* data, std::size_t bytes) {
  if (peer < 0 || peer >= hub_->n || peer == rank_)
    return invalid_argument("fake transport: bad send peer " + std::to_string(peer));
  FakeHub& h = *hub_;
  std::lock_guard<std::mutex> lock(h.mu);
  CHORUS_RETURN_IF_ERROR(self_status(h, rank_));
  if (h.dead[peer]) return peer_lost(peer);
  h.stats[rank_].messages_sent++;
  h.stats[rank_].bytes_sent += bytes;
  const Key key = make_key(rank_, peer, tag);
  auto req = std::make_unique<FakeRequest>(hub_, key, nullptr, bytes);
  auto it = h.posted.find(key);
  if (it != h.posted.end()) {
    FakeRequest* r = it->second.front();
    it->second.pop_front();
    if (it->second.empty()) h.posted.erase(it);
    deliver(h, r, data, bytes);
  } else {
    const char* p = static_cast<const char*>(data);
    h.unexpected[key].emplace_back(p, p + bytes);
    h.unexpected_bytes += bytes;
  }
  h.complete(req.get(), Status());  // eager: the data was copied
  h.cv.notify_all();
  return RequestPtr(std::move(req));
}

Result<RequestPtr> FakeTransport::post_recv(int peer, Tag tag, void* data, std::size_t bytes) {
  if (peer < 0 || peer >= hub_->n || peer == rank_)
    return invalid_argument("fake transport: bad recv peer " + std::to_string(peer));
  FakeHub& h = *hub_;
  std::lock_guard<std::mutex> lock(h.mu);
  CHORUS_RETURN_IF_ERROR(self_status(h, rank_));
  const Key key = make_key(peer, rank_, tag);
  auto it = h.unexpected.find(key);
  if (it == h.unexpected.end() && h.dead[peer]) return peer_lost(peer);
  // Created only now: destroying a request takes h.mu, which is held here.
  auto req = std::make_unique<FakeRequest>(hub_, key, data, bytes);
  if (it != h.unexpected.end()) {
    std::vector<char> msg = std::move(it->second.front());
    it->second.pop_front();
    if (it->second.empty()) h.unexpected.erase(it);
    h.unexpected_bytes -= msg.size();
    deliver(h, req.get(), msg.data(), msg.size());
    return RequestPtr(std::move(req));
  }
  req->posted_ = true;
  h.posted[key].push_back(req.get());
  return RequestPtr(std::move(req));
}

Status FakeTransport::wait(std::span<Request* const> reqs, Deadline deadline) {
  FakeHub& h = *hub_;
  std::unique_lock<std::mutex> lock(h.mu);
  for (;;) {
    const FakeRequest* pending = nullptr;
    for (Request* base : reqs) {
      if (base == nullptr) continue;
      auto* r = static_cast<FakeRequest*>(base);
      if (r->done_ && !r->status_.is_ok()) return r->status_;
      if (!r->done_ && pending == nullptr) pending = r;
    }
    if (pending == nullptr) return Status();
    CHORUS_RETURN_IF_ERROR(self_status(h, rank_));
    if (deadline.is_never()) {
      h.cv.wait(lock);
    } else if (h.cv.wait_until(lock, deadline.at()) == std::cv_status::timeout &&
               deadline.expired()) {
      // One last look: the request may have completed right at the deadline.
      bool all_done = true;
      for (Request* base : reqs) {
        if (base && !static_cast<FakeRequest*>(base)->done_) all_done = false;
      }
      if (all_done) continue;
      return Status(ErrorCode::kTimeout,
                    "fake transport: timed out waiting for rank " +
                        std::to_string(pending->key.src == rank_ ? pending->key.dst
                                                                 : pending->key.src) +
                        " under " + tag_text(pending->key),
                    pending->key.src == rank_ ? pending->key.dst : pending->key.src);
    }
  }
}

void FakeTransport::abort(const Status& reason) {
  FakeHub& h = *hub_;
  std::lock_guard<std::mutex> lock(h.mu);
  Status s = reason.is_ok() ? Status(ErrorCode::kAborted, "fake transport: aborted") : reason;
  if (h.aborted[rank_].is_ok()) h.aborted[rank_] = s;
  const int me = rank_;
  h.fail_posted([&](const Key& k) { return k.dst == me ? s : Status(); });
  h.cv.notify_all();
}

void FakeTransport::kill_rank(int r) {
  FakeHub& h = *hub_;
  std::lock_guard<std::mutex> lock(h.mu);
  if (r < 0 || r >= h.n || h.dead[r]) return;
  h.dead[r] = true;
  h.fail_posted([&](const Key& k) {
    if (k.dst == r) return Status(ErrorCode::kAborted, "fake transport: this rank was killed");
    if (k.src == r) return peer_lost(r);
    return Status();
  });
  for (auto it = h.unexpected.begin(); it != h.unexpected.end();) {
    if (it->first.dst != r) {
      ++it;
      continue;
    }
    for (const auto& m : it->second) h.unexpected_bytes -= m.size();
    it = h.unexpected.erase(it);
  }
  h.cv.notify_all();
}

FakeStats FakeTransport::stats() const {
  std::lock_guard<std::mutex> lock(hub_->mu);
  return hub_->stats[rank_];
}

std::size_t FakeTransport::unexpected_bytes() const {
  std::lock_guard<std::mutex> lock(hub_->mu);
  return hub_->unexpected_bytes;
}

std::vector<std::unique_ptr<Transport>> make_fake_world(int n) {
  auto hub = std::make_shared<FakeHub>(n);
  std::vector<std::unique_ptr<Transport>> world;
  world.reserve(n);
  for (int r = 0; r < n; ++r) world.push_back(std::make_unique<FakeTransport>(hub, r));
  return world;
}

}  // namespace chorus::transport::testing
