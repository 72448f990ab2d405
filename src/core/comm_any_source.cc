// CommImpl's receive from any source: the transport's probe finds a peer whose next
// message of the tag has arrived; the receive from that peer then takes that pair's seq,
// so every pair's sequence stays in step with its sender (and desync checks stay exact).
#include "core/comm_impl.h"
#include "util/strings.h"

namespace chorus::core {

namespace {

std::string any_context(int rank, int tag, std::size_t bytes) {
  if (tag != 0)
    return str_printf("rank %d in recv_any from any rank, tag %d (%zu bytes)", rank, tag, bytes);
  return str_printf("rank %d in recv_any from any rank (%zu bytes)", rank, bytes);
}

// Failures that concern only the call (not the communicator) are returned as they are.
bool call_error(const Status& s) {
  return s.code() == ErrorCode::kInvalidArgument || s.code() == ErrorCode::kNotSupported;
}

}  // namespace

Status CommImpl::claim_any_source(void* buf, std::size_t bytes, int tag, int stream,
                                  Deadline deadline, std::uint64_t rec, IssuedOp* op) {
  if (size_ < 2)
    return invalid_argument("recv_any: the communicator has no other rank to receive from");
  std::vector<transport::ProbeTarget> targets;
  for (;;) {
    Status refused = failure_.refuse("recv_any", 0);
    if (!refused.is_ok()) {
      recorder_->failed(rec, refused.message());
      return refused;
    }
    targets.clear();
    {
      const auto g = p2p_seqs_.lock();
      // Start after the last source chosen: a busy sender cannot starve the others.
      const int first = p2p_seqs_.any_last() < 0 ? rank_ : p2p_seqs_.any_last();
      for (int k = 1; k <= size_; ++k) {
        const int peer = (first + k) % size_;
        if (peer == rank_) continue;
        targets.push_back(transport::ProbeTarget{
            peer, p2p_wire_tag(bytes, tag, p2p_seqs_.peek(false, peer, tag))});
      }
    }
    Result<int> got = transport_->probe(targets, deadline);
    if (!got.has_value()) {
      Status s = got.status();
      if (call_error(s)) {
        recorder_->failed(rec, s.message());
        return s;
      }
      return fail(s, any_context(rank_, tag, bytes), rec);
    }
    const transport::ProbeTarget& t = targets[static_cast<std::size_t>(*got)];
    const auto g = p2p_seqs_.lock();
    // A receive from that peer issued meanwhile (another thread) took the message: again.
    if (op::kP2pSeqBase + p2p_seqs_.peek(false, t.peer, tag) != t.tag.seq) continue;
    p2p_seqs_.set_any_last(t.peer);
    recorder_->done(rec);
    return issue_p2p(false, buf, bytes, t.peer, tag, stream, op, "recv_any");
  }
}

Result<int> CommImpl::recv_any(void* buf, std::size_t bytes, int tag) {
  if (in_group())
    return invalid_argument("recv_any (receive from any source) is not allowed between "
                            "group_start() and group_end(): its source is needed at once");
  if (tag < 0) return invalid_argument(str_printf("tag must be >= 0, got %d", tag));
  sync_default_stream();
  const std::uint64_t rec = record_p2p("recv_any", 0, -1, bytes, streams_[0]->label());
  recorder_->start(rec, "probe");
  IssuedOp op;
  CHORUS_RETURN_IF_ERROR(
      claim_any_source(buf, bytes, tag, 0, Deadline::after(cfg_.timeout), rec, &op));
  Status s = execute_p2p(op);
  retire();
  if (!s.is_ok()) return s;
  return op.peer;
}

struct CommImpl::AnySourceTask : StreamTask {
  // First on the caller's stream (after its earlier operations), which hands the task to
  // the any_source worker and moves on; there the source is found and the receive posted.
  void run() override {
    if (!on_any_stream) {
      auto next = std::make_unique<AnySourceTask>(*this);
      next->on_any_stream = true;
      comm->any_stream_->push(std::move(next));
      return;
    }
    auto p = std::make_unique<PendingOp>();
    p->work = work;
    comm->recorder_->start(rec, "probe");
    Status s = comm->claim_any_source(buf, bytes, tag, stream, Deadline::after(comm->cfg_.timeout),
                                      rec, &p->op);
    comm->retire();  // the wait counted by recv_any_async (the receive counts itself)
    if (!s.is_ok()) return work->complete(std::move(s));
    work->set_source(p->op.peer, static_cast<std::int64_t>(p->op.seq()));
    comm->post_p2p(std::move(p));
  }
  CommImpl* comm = nullptr;
  void* buf = nullptr;
  std::size_t bytes = 0;
  int tag = 0;
  int stream = 0;
  std::uint64_t rec = 0;
  std::shared_ptr<WorkState> work;
  bool on_any_stream = false;
};

Result<std::shared_ptr<WorkState>> CommImpl::recv_any_async(void* buf, std::size_t bytes, int tag,
                                                           int stream) {
  CHORUS_RETURN_IF_ERROR(check_stream(stream));
  if (in_group())
    return invalid_argument("recv_any_async (receive from any source) is not allowed between "
                            "group_start() and group_end()");
  if (tag < 0) return invalid_argument(str_printf("tag must be >= 0, got %d", tag));
  if (size_ < 2)
    return invalid_argument("recv_any: the communicator has no other rank to receive from");
  Status refused = failure_.refuse("recv_any", 0);
  if (!refused.is_ok()) return WorkState::failed(-1, "recv_any", refused);
  auto task = std::make_unique<AnySourceTask>();
  task->comm = this;
  task->buf = buf;
  task->bytes = bytes;
  task->tag = tag;
  task->stream = stream;
  task->rec = record_p2p("recv_any", 0, -1, bytes, streams_[stream]->label());
  task->work = std::make_shared<WorkState>(-1, "recv_any");
  std::shared_ptr<WorkState> work = task->work;
  inflight_.fetch_add(1, std::memory_order_acq_rel);
  streams_[stream]->push(std::move(task));
  return work;
}

}  // namespace chorus::core
