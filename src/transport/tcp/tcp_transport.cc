// The TCP Transport: validates arguments, wraps engine ops in Requests, and builds the
// engine from a freshly formed mesh (create_tcp_transport).
#include "transport/tcp/tcp_transport.h"

#include <memory>

#include "diag/log.h"
#include "transport/tcp/engine.h"
#include "util/strings.h"

namespace chorus::tcp {
namespace {

class TcpRequest final : public transport::Request {
 public:
  explicit TcpRequest(std::shared_ptr<Engine> engine) : engine_(std::move(engine)) {}
  ~TcpRequest() override { engine_->cancel(&op_); }
  bool done() const override {
    return op_.done.load(std::memory_order_acquire) || engine_->aborted();
  }
  Status status() const override {
    if (op_.done.load(std::memory_order_acquire)) return op_.status;
    if (engine_->aborted()) return engine_->abort_status();
    return Status::ok();
  }
  Op* op() { return &op_; }

 private:
  std::shared_ptr<Engine> engine_;  // keeps the engine alive for cancel after ~Transport
  Op op_;
};

class TcpTransport final : public transport::Transport {
 public:
  explicit TcpTransport(std::shared_ptr<Engine> engine) : engine_(std::move(engine)) {}
  ~TcpTransport() override { engine_->close(); }

  int rank() const override { return engine_->rank(); }
  int size() const override { return engine_->size(); }
  std::string name() const override { return "tcp"; }

  Result<transport::RequestPtr> post_send(int peer, transport::Tag tag, const void* data,
                                          std::size_t bytes) override {
    CHORUS_RETURN_IF_ERROR(check("post_send", peer, data, bytes));
    auto req = std::make_unique<TcpRequest>(engine_);
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
    auto req = std::make_unique<TcpRequest>(engine_);
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
      auto* r = dynamic_cast<TcpRequest*>(reqs[i]);
      if (r == nullptr)
        return invalid_argument(str_printf("wait: request %zu does not belong to the TCP transport", i));
      ops[i] = r->op();
    }
    return engine_->wait(std::span<Op* const>(ops, reqs.size()), deadline);
  }

  void abort(const Status& reason) override { engine_->abort(reason); }
  void poke() override { engine_->poke(); }
  bool idle() const override { return engine_->idle(); }
  Status disagreement(const transport::Tag& tag) override { return engine_->disagreement(tag); }
  Status failure() const override {
    return engine_->aborted() ? engine_->abort_status() : Status::ok();
  }
  void set_progress(std::uint64_t last_done_seq) override { engine_->set_progress(last_done_seq); }
  std::int64_t peer_progress(int peer) const override {
    return peer >= 0 && peer < size() && peer != rank() ? engine_->peer_progress(peer) : -1;
  }

 private:
  Status check(const char* what, int peer, const void* data, std::size_t bytes) const {
    return transport::check_post_args(what, peer, rank(), size(), data, bytes);
  }

  std::shared_ptr<Engine> engine_;
};

}  // namespace

Result<std::unique_ptr<transport::Transport>> create_tcp_transport(const TcpOptions& opts,
                                                                   const AddressExchange& exchange) {
  CHORUS_ASSIGN_OR_RETURN(Mesh mesh, build_mesh(opts, exchange));
  CHORUS_LOG(INFO, Net, "rank %d: TCP mesh of %d ranks formed", opts.rank, opts.size);
  auto engine = std::make_shared<Engine>(opts, std::move(mesh));
  return std::unique_ptr<transport::Transport>(std::make_unique<TcpTransport>(std::move(engine)));
}

}  // namespace chorus::tcp
