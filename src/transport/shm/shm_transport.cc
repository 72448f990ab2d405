// The shm Transport: argument checks, engine ops wrapped in Requests, and segment set-up
// (create, attach, unlink once everyone is attached).
#include "transport/shm/shm_transport.h"

#include <unistd.h>

#include "diag/log.h"
#include "transport/shm/engine.h"
#include "util/strings.h"

namespace chorus::shm {
namespace {

class ShmRequest final : public transport::Request {
 public:
  explicit ShmRequest(std::shared_ptr<Engine> engine) : engine_(std::move(engine)) {}
  ~ShmRequest() override { engine_->cancel(&op_); }
  bool done() const override { return op_.done.load(std::memory_order_acquire) || engine_->aborted(); }
  Status status() const override {
    if (op_.done.load(std::memory_order_acquire)) return op_.status;
    if (engine_->aborted()) return engine_->abort_status();
    return Status::ok();
  }
  Op* op() { return &op_; }

 private:
  std::shared_ptr<Engine> engine_;  // keeps the mapping alive for cancel after ~Transport
  Op op_;
};

class ShmWindows final : public transport::SharedWindows {
 public:
  explicit ShmWindows(Engine* engine) : engine_(engine) {}
  std::size_t window_bytes() const override { return engine_->segment().window_bytes(); }
  void* window(int rank) override { return engine_->segment().window(rank); }
  Status barrier(const transport::Tag& tag, Deadline deadline) override {
    return engine_->window_barrier(tag, deadline);
  }
  std::uint64_t barriers() const override { return engine_->window_barriers(); }

 private:
  Engine* engine_;
};

class ShmTransport final : public transport::Transport {
 public:
  explicit ShmTransport(std::shared_ptr<Engine> engine)
      : engine_(std::move(engine)), windows_(engine_.get()) {}
  ~ShmTransport() override { engine_->close(); }
  int rank() const override { return engine_->rank(); }
  int size() const override { return engine_->size(); }

  Result<transport::RequestPtr> post_send(int peer, transport::Tag tag, const void* data,
                                          std::size_t bytes) override {
    CHORUS_RETURN_IF_ERROR(check("post_send", peer, data, bytes));
    auto req = std::make_unique<ShmRequest>(engine_);
    Op* op = req->op();
    op->kind = Op::Kind::kSend;
    op->peer = peer;
    op->tag = tag;
    op->send_data = static_cast<const std::uint8_t*>(data);
    op->bytes = bytes;
    CHORUS_RETURN_IF_ERROR(engine_->post(op));
    return transport::RequestPtr(std::move(req));
  }

  Result<transport::RequestPtr> post_recv(int peer, transport::Tag tag, void* data,
                                          std::size_t bytes) override {
    CHORUS_RETURN_IF_ERROR(check("post_recv", peer, data, bytes));
    auto req = std::make_unique<ShmRequest>(engine_);
    Op* op = req->op();
    op->kind = Op::Kind::kRecv;
    op->peer = peer;
    op->tag = tag;
    op->recv_data = static_cast<std::uint8_t*>(data);
    op->bytes = bytes;
    CHORUS_RETURN_IF_ERROR(engine_->post(op));
    return transport::RequestPtr(std::move(req));
  }

  Status wait(std::span<transport::Request* const> reqs, Deadline deadline) override {
    constexpr std::size_t kInline = 16;
    Op* inline_ops[kInline];
    std::unique_ptr<Op*[]> heap_ops;
    Op** ops = inline_ops;
    if (reqs.size() > kInline) {
      heap_ops = std::make_unique<Op*[]>(reqs.size());
      ops = heap_ops.get();
    }
    for (std::size_t i = 0; i < reqs.size(); ++i) {
      ops[i] = nullptr;
      if (reqs[i] == nullptr) continue;
      auto* r = dynamic_cast<ShmRequest*>(reqs[i]);
      if (r == nullptr)
        return invalid_argument(str_printf("wait: request %zu does not belong to the shm transport", i));
      ops[i] = r->op();
    }
    return engine_->wait(std::span<Op* const>(ops, reqs.size()), deadline);
  }

  void abort(const Status& reason) override { engine_->abort(reason); }
  void set_progress(std::uint64_t last_done_seq) override {
    engine_->segment().slot(rank()).progress.store(last_done_seq + 1, std::memory_order_relaxed);
  }
  std::int64_t peer_progress(int peer) const override {
    if (peer < 0 || peer >= size() || peer == rank()) return -1;
    return static_cast<std::int64_t>(
               engine_->segment().slot(peer).progress.load(std::memory_order_relaxed)) - 1;
  }
  transport::SharedWindows* shared_windows() override {
    return windows_.window_bytes() > 0 ? &windows_ : nullptr;
  }

 private:
  Status check(const char* what, int peer, const void* data, std::size_t bytes) const {
    return transport::check_post_args(what, peer, rank(), size(), data, bytes);
  }

  std::shared_ptr<Engine> engine_;
  ShmWindows windows_;
};

// Everyone reports "ok" or its error; the first error (naming its rank) wins.
Status first_error(const std::vector<std::string>& all, const char* what) {
  for (std::size_t r = 0; r < all.size(); ++r)
    if (all[r] != "ok")
      return Status(ErrorCode::kIo, str_printf("rank %zu could not %s: %s", r, what, all[r].c_str()),
                    static_cast<int>(r));
  return Status::ok();
}

}  // namespace

Result<std::unique_ptr<transport::Transport>> create_shm_transport(const ShmOptions& opts,
                                                                   const Exchange& exchange) {
  if (opts.ring_bytes < 4096)
    return invalid_argument(str_printf("shm ring size %zu is below 4096 bytes (CHORUS_BUFFSIZE)",
                                       opts.ring_bytes));
  const std::string name = segment_name(opts.job_token);
  Segment seg;
  std::string mine = "ok";
  if (opts.rank == 0) {
    auto s = Segment::create(name, opts.size, opts.ring_bytes, opts.job_token,
                             (opts.window_bytes + 4095) & ~std::size_t{4095});
    if (s.has_value()) seg = std::move(*s);
    else mine = s.status().message();
  }
  // Rank 0 removes the name on every path once the others had their chance to attach.
  struct Unlinker {
    const std::string& name;
    bool armed;
    ~Unlinker() {
      if (armed) (void)Segment::unlink(name);
    }
  } unlinker{name, opts.rank == 0 && mine == "ok"};
  CHORUS_ASSIGN_OR_RETURN(auto created, exchange("shm_created", mine));
  CHORUS_RETURN_IF_ERROR(first_error(created, "create the shared-memory segment"));
  if (opts.rank != 0) {
    auto s = Segment::open(name, opts.size, opts.job_token);
    if (s.has_value()) seg = std::move(*s);
    else mine = s.status().message();
  }
  if (mine == "ok") {
    seg.slot(opts.rank).pid.store(static_cast<std::int32_t>(::getpid()), std::memory_order_relaxed);
    seg.slot(opts.rank).state.store(kAlive, std::memory_order_release);
  }
  CHORUS_ASSIGN_OR_RETURN(auto attached, exchange("shm_attached", mine));
  CHORUS_RETURN_IF_ERROR(first_error(attached, "attach the shared-memory segment"));
  CHORUS_LOG(INFO, Net, "rank %d: shm segment %s of %d ranks attached (%zu bytes per ring)",
             opts.rank, name.c_str(), opts.size, opts.ring_bytes);
  auto engine = std::make_shared<Engine>(opts, std::move(seg));
  return std::unique_ptr<transport::Transport>(std::make_unique<ShmTransport>(std::move(engine)));
}

}  // namespace chorus::shm
