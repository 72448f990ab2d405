// CommImpl's operation path: the issue step (caller's thread: refuse-check, seq,
// signature, flight-recorder entry, algorithm, window ticket) and the execute step
// (deadline, window turn, algorithm or transfer, completion or failure), shared by
// blocking calls (both steps inline), streams and groups.
#include "core/comm_impl.h"

#include <optional>

#include "diag/log.h"
#include "op/level_log.h"
#include "op/signature.h"
#include "op/tag_space.h"
#include "util/strings.h"

namespace chorus::core {

Status CommImpl::run(op::CollKind kind, op::CollArgs args, const char* label) {
  if (in_group()) {
    auto p = std::make_unique<PendingOp>();
    CHORUS_RETURN_IF_ERROR(issue_collective(kind, args, label, 0, &p->op));
    if (kind == op::CollKind::kAllToAllV) p->own_v_arrays(size_);
    submit(std::move(p));
    return Status::ok();
  }
  sync_default_stream();
  IssuedOp op;
  CHORUS_RETURN_IF_ERROR(issue_collective(kind, args, label, 0, &op, lone_call()));
  Status s = execute(op, op.issue_tick_ns);
  if (!op.alone) retire();
  return s;
}

Status CommImpl::send(const void* buf, std::size_t bytes, int peer, int tag) {
  // The transport only reads a send buffer; one path serves both directions.
  return point_to_point(true, const_cast<void*>(buf), bytes, peer, tag);
}

Status CommImpl::recv(void* buf, std::size_t bytes, int peer, int tag) {
  return point_to_point(false, buf, bytes, peer, tag);
}

Status CommImpl::point_to_point(bool sending, void* buf, std::size_t bytes, int peer, int tag) {
  if (in_group()) {
    auto p = std::make_unique<PendingOp>();
    CHORUS_RETURN_IF_ERROR(issue_p2p(sending, buf, bytes, peer, tag, 0, &p->op));
    submit(std::move(p));
    return Status::ok();
  }
  sync_default_stream();
  IssuedOp op;
  CHORUS_RETURN_IF_ERROR(issue_p2p(sending, buf, bytes, peer, tag, 0, &op));
  Status s = execute_p2p(op);
  retire();
  return s;
}

Status CommImpl::issue_collective(op::CollKind kind, const op::CollArgs& args,
                                  const char* label, int stream, IssuedOp* out, bool alone) {
  const char* name = label != nullptr ? label : op::to_string(kind);
  CHORUS_RETURN_IF_ERROR(failure_.refuse(name, next_seq_));
  IssuedOp& op = *out;
  op.name = name;
  op.kind = kind;
  op.args = args;
  op.stream = stream;
  op.timeout = cfg_.timeout;
  const std::uint64_t seq = next_seq_++;
  op.args.comm = comm_id_;
  op.args.seq = seq;
  op.args.chunk_bytes = cfg_.chunk_bytes;
  op.args.small_bytes = cfg_.small_bytes;
  op.args.sig = cfg_.desync_check
                    ? op::make_signature(kind, args.dtype, args.count, args.op,
                                           op::takes_reduce_op(kind), args.root,
                                           op::takes_root(kind))
                    : 0;
  diag::OpIdentity id;
  id.seq = seq;
  id.name = name;
  id.dtype = kind == op::CollKind::kBarrier ? "" : chorus::to_string(args.dtype);
  id.redop = op::takes_reduce_op(kind) ? chorus::to_string(args.op) : "";
  id.count = args.count;
  id.root = op::takes_root(kind) ? args.root : -1;
  id.bytes = args.count * dtype_size(args.dtype);
  op.stream_label = streams_[stream]->label();
  id.stream = op.stream_label;
  op.alone = alone;
  if (!in_group()) choose(op);  // a group chooses at its end, after fusing
  op.issue_tick_ns = diag::tick_now_ns();
  // A lone call starts as it is issued: one recorder update for both.
  op.rec = recorder_->issue(id, op.issue_tick_ns, alone ? op.choice.name : nullptr);
  if (observe_) op.issue_ns = diag::steady_now_ns();
  if (!alone) inflight_.fetch_add(1, std::memory_order_acq_rel);
  return Status::ok();
}

void CommImpl::choose(IssuedOp& op) {
  const std::size_t bytes = op.args.count * dtype_size(op.args.dtype);
  const Pricing pricing = agreed_pricing(op);
  ChoiceMemo& memo = memo_[static_cast<std::size_t>(op.kind)];
  if (memo.bytes != bytes || memo.pricing != pricing) {
    memo.choice = selector_for(pricing).choose(op.kind, bytes, size_, caps_);
    memo.bytes = bytes;
    memo.pricing = pricing;
  }
  op.choice = memo.choice;
  op.ticket =
      op.choice.uses_windows && !op.alone ? static_cast<std::int64_t>(tickets_.take()) : -1;
}

transport::Tag CommImpl::p2p_wire_tag(std::size_t bytes, int tag, std::uint64_t seq) const {
  const std::uint32_t comm = op::p2p_comm(comm_id_, tag != 0);
  std::uint64_t sig = cfg_.desync_check ? op::p2p_signature(bytes) : 0;
  if (tag != 0) sig |= transport::kSigUnordered;
  return transport::Tag{comm, op::kP2pSeqBase + seq, static_cast<std::uint32_t>(tag), sig};
}

Status CommImpl::issue_p2p(bool sending, void* buf, std::size_t bytes, int peer, int tag,
                           int stream, IssuedOp* out, const char* label) {
  const char* name = label != nullptr ? label : sending ? "send" : "recv";
  if (tag < 0) return invalid_argument(str_printf("tag must be >= 0, got %d", tag));
  CHORUS_RETURN_IF_ERROR(failure_.refuse(name, tag == 0 ? p2p_seqs_.peek(sending, peer, tag) : 0));
  IssuedOp& op = *out;
  op.p2p = true;
  op.name = name;
  op.sending = sending;
  op.buf = buf;
  op.bytes = bytes;
  op.peer = peer;
  op.stream = stream;
  op.timeout = cfg_.timeout;
  op.tag = p2p_wire_tag(bytes, tag, p2p_seqs_.next(sending, peer, tag));
  op.stream_label = streams_[stream]->label();
  op.rec = record_p2p(name, op.seq(), peer, bytes, op.stream_label);
  if (observe_) op.issue_ns = diag::steady_now_ns();
  inflight_.fetch_add(1, std::memory_order_acq_rel);
  return Status::ok();
}

std::string CommImpl::op_context(const IssuedOp& op) const {
  const auto seq = static_cast<unsigned long long>(op.seq());
  if (op.p2p && op.tag.step != 0)
    return str_printf("rank %d in %s seq %llu %s rank %d tag %u (%zu bytes)", rank_, op.name,
                      seq, op.sending ? "to" : "from", op.peer, op.tag.step, op.bytes);
  if (op.p2p)
    return str_printf("rank %d in %s seq %llu %s rank %d (%zu bytes)", rank_, op.name, seq,
                      op.sending ? "to" : "from", op.peer, op.bytes);
  return str_printf("rank %d in %s seq %llu (%s x %zu, algo %s)", rank_, op.name, seq,
                    chorus::to_string(op.args.dtype), op.args.count, op.choice.name);
}

Status CommImpl::drop(IssuedOp& op, Status why) {
  if (op.ticket >= 0) tickets_.release(static_cast<std::uint64_t>(op.ticket));
  op.ticket = -1;
  if (why.is_ok())  // not expected: a stopped window turn without a recorded cause
    why = Status(ErrorCode::kAborted,
                 str_printf("rank %d: %s seq %llu was abandoned", rank_, op.name,
                            static_cast<unsigned long long>(op.seq())),
                 -1, static_cast<std::int64_t>(op.seq()));
  recorder_->failed(op.rec, why.message());
  return why;
}

Status CommImpl::execute(IssuedOp& op, std::int64_t start_ns) {
  if (op.p2p) return execute_p2p(op);
  const std::uint64_t seq = op.args.seq;
  Status refused = failure_.refuse(op.name, seq);
  if (!refused.is_ok()) return drop(op, std::move(refused));
  if (start_ns == 0) start_ns = diag::tick_now_ns();
  op.args.deadline = Deadline::after(
      op.timeout, Deadline::Clock::time_point(std::chrono::nanoseconds(start_ns)));
  op.args.sig = order_flag(op.args.sig);
  if (op.ticket >= 0) {
    const auto turn = tickets_.wait_turn(static_cast<std::uint64_t>(op.ticket), op.args.deadline);
    if (turn == WindowTickets::Wait::kStopped) return drop(op, failure_.refuse(op.name, seq));
    if (turn == WindowTickets::Wait::kTimeout) {
      tickets_.release(static_cast<std::uint64_t>(op.ticket));
      op.ticket = -1;
      return fail(Status(ErrorCode::kTimeout,
                         "deadline passed waiting for an earlier operation that uses the "
                         "shared windows to finish on this rank",
                         -1, static_cast<std::int64_t>(seq)),
                  op_context(op), op.rec);
    }
  }
  CHORUS_LOG(DEBUG, Coll, "%s seq %llu count %zu %s algo %s stream %s", op.name,
             static_cast<unsigned long long>(seq), op.args.count,
             chorus::to_string(op.args.dtype), op.choice.name, op.stream_label);
  if (!op.alone) recorder_->start(op.rec, op.choice.name, start_ns);
  std::optional<op::LevelLog> levels;  // a hierarchical algorithm's, when watched
  if (observe_) {
    if (observe_->wants_levels()) op.args.levels = &levels.emplace();
    observe_->start(op);
  }
  Status s = op.choice.fn(*transport_, op.args);
  // An abort learnt while the operation ran ends it on this rank too, even when every
  // message it needed had already arrived (e.g. one exchange whose peer aborted after
  // sending): the operation fails on every rank, not only on those still waiting;
  // unless the rank it came from had completed this operation itself.
  if (s.is_ok()) s = transport_->failure_for(seq);
  if (observe_) observe_->end(op, s.is_ok());
  op.args.levels = nullptr;
  // A failure stops the tickets (and aborts the transport) before this ticket passes the
  // turn on: the next windowed operation on another stream must not enter a window barrier
  // that peers still waiting in this one would take for a different collective (kDesync).
  if (!s.is_ok()) s = fail(s.with_seq(static_cast<std::int64_t>(seq)), op_context(op), op.rec);
  if (op.ticket >= 0) tickets_.release(static_cast<std::uint64_t>(op.ticket));
  op.ticket = -1;
  if (!s.is_ok()) return s;
  recorder_->done(op.rec);
  note_progress(seq, op.alone);
  return s;
}

Status CommImpl::execute_p2p(IssuedOp& op) {
  Status refused = failure_.refuse(op.name, op.seq());
  if (!refused.is_ok()) return drop(op, std::move(refused));
  recorder_->start(op.rec, "p2p");
  const Deadline deadline = Deadline::after(op.timeout);
  op.tag.sig = order_flag(op.tag.sig);
  if (observe_) observe_->start(op);
  Status s = op.sending ? transport::send(*transport_, op.peer, op.tag, op.buf, op.bytes, deadline)
                        : transport::recv(*transport_, op.peer, op.tag, op.buf, op.bytes, deadline);
  if (observe_) observe_->end(op, s.is_ok());
  if (s.is_ok()) {
    recorder_->done(op.rec);
    return s;
  }
  return fail(p2p_failure(s, op),
              op_context(op), op.rec);
}

void CommImpl::note_progress(std::uint64_t seq, bool alone) {
  if (alone) {  // the only operation running: nothing to race with
    done_max_.store(seq + 1, std::memory_order_relaxed);
    transport_->set_progress(seq);
    return;
  }
  // Streams complete out of order: peers are told the highest completed seq.
  std::uint64_t seen = done_max_.load(std::memory_order_relaxed);
  while (seen < seq + 1 &&
         !done_max_.compare_exchange_weak(seen, seq + 1, std::memory_order_relaxed)) {
  }
  if (seen < seq + 1) transport_->set_progress(seq);
}

}  // namespace chorus::core
