// CommImpl's asynchronous operations: streams, queuing issued operations on them, posting
// asynchronous sends and receives (completed by P2pWaiter), and synchronize().
#include "core/comm_impl.h"
#include "util/strings.h"

namespace chorus::core {

void PendingOp::own_v_arrays(int size) {
  const auto n = static_cast<std::size_t>(size);
  op::CollArgs& a = op.args;
  v_arrays.resize(4 * n);
  const std::size_t* src[4] = {a.send_counts, a.send_displs, a.recv_counts, a.recv_displs};
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t p = 0; p < n; ++p) v_arrays[i * n + p] = src[i][p];
  a.send_counts = v_arrays.data();
  a.send_displs = v_arrays.data() + n;
  a.recv_counts = v_arrays.data() + 2 * n;
  a.recv_displs = v_arrays.data() + 3 * n;
}

// Runs on the stream's worker: execute, then complete the WorkState (callbacks run here).
struct CommImpl::AsyncTask : StreamTask {
  AsyncTask(CommImpl* c, std::unique_ptr<PendingOp> p) : comm(c), pending(std::move(p)) {}
  void run() override {
    if (pending->op.p2p) {  // posted here, completed by the waiter: the stream moves on
      comm->post_p2p(std::move(pending));
      return;
    }
    Status s = comm->execute(pending->op);
    comm->retire();
    pending->work->complete(std::move(s));
  }
  CommImpl* comm;
  std::unique_ptr<PendingOp> pending;
};

int CommImpl::create_stream(const std::string& name) {
  const int id = static_cast<int>(streams_.size());
  streams_.push_back(std::make_unique<StreamQueue>(id, name));
  return id;
}

Status CommImpl::check_stream(int id) const {
  if (id < 0 || id >= static_cast<int>(streams_.size()))
    return invalid_argument(str_printf("stream id %d is not a stream of this communicator "
                                       "(it has %zu)", id, streams_.size()));
  return Status::ok();
}

std::shared_ptr<WorkState> CommImpl::submit(std::unique_ptr<PendingOp> p) {
  std::shared_ptr<WorkState> work = p->work;
  if (in_group()) {
    if (work) work->set_deferred(std::this_thread::get_id());
    group_.push_back(std::move(p));
  } else {
    StreamQueue& q = *streams_[p->op.stream];
    q.push(std::make_unique<AsyncTask>(this, std::move(p)));
  }
  return work;
}

Result<std::shared_ptr<WorkState>> CommImpl::run_async(op::CollKind kind, op::CollArgs args,
                                                       int stream) {
  CHORUS_RETURN_IF_ERROR(check_stream(stream));
  auto p = std::make_unique<PendingOp>();
  Status s = issue_collective(kind, args, nullptr, stream, &p->op);
  if (!s.is_ok())
    return WorkState::failed(static_cast<std::int64_t>(next_seq_), op::to_string(kind), s);
  if (kind == op::CollKind::kAllToAllV) p->own_v_arrays(size_);
  p->work = std::make_shared<WorkState>(static_cast<std::int64_t>(p->op.seq()), p->op.name);
  return submit(std::move(p));
}

Result<std::shared_ptr<WorkState>> CommImpl::p2p_async(bool sending, void* buf, std::size_t bytes,
                                                       int peer, int stream, int tag) {
  CHORUS_RETURN_IF_ERROR(check_stream(stream));
  auto p = std::make_unique<PendingOp>();
  Status s = issue_p2p(sending, buf, bytes, peer, tag, stream, &p->op);
  if (s.code() == ErrorCode::kInvalidArgument) return s;
  if (!s.is_ok()) {
    const std::uint64_t seq = tag != 0 ? 0 : p2p_seqs_.peek(sending, peer, tag);
    return WorkState::failed(static_cast<std::int64_t>(seq), sending ? "send" : "recv", s);
  }
  p->work = std::make_shared<WorkState>(static_cast<std::int64_t>(p->op.seq()), p->op.name);
  return submit(std::move(p));
}

void CommImpl::post_p2p(std::unique_ptr<PendingOp> p) {
  IssuedOp& op = p->op;
  auto finish = [this](PendingOp& done, Status s) {
    retire();
    done.work->complete(std::move(s));
  };
  Status refused = failure_.refuse(op.name, op.seq());
  if (!refused.is_ok()) return finish(*p, drop(op, std::move(refused)));
  recorder_->start(op.rec, "p2p");
  const Deadline deadline = Deadline::after(op.timeout);
  op.tag.sig = order_flag(op.tag.sig);
  auto posted = op.sending ? transport_->post_send(op.peer, op.tag, op.buf, op.bytes)
                           : transport_->post_recv(op.peer, op.tag, op.buf, op.bytes);
  std::shared_ptr<PendingOp> shared(std::move(p));
  auto done = [this, shared, finish](Status s) {
    IssuedOp& o = shared->op;
    if (s.is_ok()) recorder_->done(o.rec);
    else s = fail(p2p_failure(s, o),
                  op_context(o), o.rec);
    finish(*shared, std::move(s));
  };
  if (!posted.has_value()) return done(posted.status());
  p2p_waiter_->add(std::move(*posted), deadline, std::move(done));
}

Status CommImpl::synchronize() {
  for (const auto& q : streams_) q->wait_idle();
  any_stream_->wait_idle();
  if (p2p_waiter_) p2p_waiter_->wait_idle();
  Status s = failure_.settled_failure();
  if (!s.is_ok()) return s;
  if (failure_.aborted())
    return Status(ErrorCode::kAborted,
                  str_printf("rank %d: synchronize: abort() was called on rank %d", rank_,
                             rank_));
  return Status::ok();
}

}  // namespace chorus::core
