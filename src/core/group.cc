// CommImpl's groups: the operations recorded between group_start() and group_end() run as
// one unit on the caller's thread: every point-to-point transfer is posted first
// (non-blocking requests), then the collectives run in issue order, consecutive
// compatible all_reduces fused into one over a packed buffer, then the transfers are
// waited for. Posting all transfers before waiting on any is what makes every order of
// sends and receives across ranks safe (e.g. all send right and receive left, with
// messages large enough for rendezvous).
#include <cstring>

#include "op/signature.h"
#include "core/comm_impl.h"
#include "util/overlap.h"
#include "util/strings.h"

namespace chorus::core {

namespace {

struct Range {
  const void* at;
  std::size_t bytes;
};

bool overlaps(Range a, Range b) { return util::overlaps(a.at, a.bytes, b.at, b.bytes); }

// One collective to run: a recorded op, or several all_reduces fused into one.
struct Unit {
  std::vector<std::size_t> members;  // indices into the group's operations
  IssuedOp fused;                    // the fused all_reduce (members.size() > 1)
  std::vector<char> packed;          // its buffer
};

bool is_plain_all_reduce(const IssuedOp& op) {
  return !op.p2p && op.kind == op::CollKind::kAllReduce && op.args.count > 0 &&
         std::strcmp(op.name, "all_reduce") == 0;
}

// True when `next` may join the fused run `members` of `ops`: same dtype and reduction,
// and no buffer of one is written by another (packing reads every input first).
bool joins(const std::vector<std::unique_ptr<PendingOp>>& ops,
           const std::vector<std::size_t>& members, const IssuedOp& next) {
  const IssuedOp& head = ops[members.front()]->op;
  if (!is_plain_all_reduce(next) || next.args.dtype != head.args.dtype ||
      next.args.op != head.args.op)
    return false;
  const std::size_t nb = next.args.count * dtype_size(next.args.dtype);
  const Range ns{next.args.send, nb}, nr{next.args.recv, nb};
  for (std::size_t m : members) {
    const op::CollArgs& a = ops[m]->op.args;
    const std::size_t b = a.count * dtype_size(a.dtype);
    const Range s{a.send, b}, r{a.recv, b};
    if (overlaps(nr, r) || overlaps(ns, r) || overlaps(s, nr)) return false;
  }
  return true;
}

// The collectives of the group in issue order, fusable runs of all_reduces merged.
std::vector<Unit> plan_units(const std::vector<std::unique_ptr<PendingOp>>& ops) {
  std::vector<Unit> units;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const IssuedOp& op = ops[i]->op;
    if (op.p2p) continue;
    if (!units.empty() && is_plain_all_reduce(ops[units.back().members.front()]->op) &&
        joins(ops, units.back().members, op)) {
      units.back().members.push_back(i);
      continue;
    }
    units.emplace_back().members.push_back(i);
  }
  return units;
}

}  // namespace

Status CommImpl::group_end() {
  if (group_depth_ == 0)
    return invalid_argument("group_end() was called without a matching group_start()");
  if (--group_depth_ > 0) return Status::ok();
  std::vector<std::unique_ptr<PendingOp>> ops;
  ops.swap(group_);
  if (ops.empty()) return Status::ok();
  for (const auto& p : ops)
    if (p->work) p->work->clear_deferred();
  // Earlier operations of the streams the group uses (and of the default stream, where
  // the group runs) finish first.
  sync_default_stream();
  for (const auto& p : ops) streams_[p->op.stream]->wait_idle();
  return run_group(ops);
}

// One group_end(): the group's operations, the collectives to run (fused where
// possible), the posted transfers and each operation's outcome.
class GroupRun {
 public:
  GroupRun(CommImpl& c, std::vector<std::unique_ptr<PendingOp>>& ops)
      : c_(c), ops_(ops), result_(ops.size()), reqs_(ops.size()) {}

  Status run() {
    plan();
    const Deadline deadline = Deadline::after(c_.cfg_.timeout);
    post_transfers();
    for (Unit& u : units_) run_unit(u);
    wait_transfers(deadline);
    reqs_.clear();  // cancels what is left before the buffers go back to the caller
    c_.retire(static_cast<std::int64_t>(ops_.size()));
    Status first;
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      if (first.is_ok() && !result_[i].is_ok()) first = result_[i];
      if (ops_[i]->work) ops_[i]->work->complete(result_[i]);
    }
    return first;
  }

 private:
  IssuedOp& op(std::size_t i) { return ops_[i]->op; }

  // Algorithms and window tickets, in issue order (identical on every rank).
  void plan() {
    units_ = plan_units(ops_);
    for (Unit& u : units_) {
      if (u.members.size() == 1) {
        c_.choose(op(u.members[0]));
        continue;
      }
      IssuedOp& f = u.fused;
      f = op(u.members[0]);
      f.name = "fused_all_reduce";
      std::size_t total = 0;
      for (std::size_t m : u.members) total += op(m).args.count;
      f.args.count = total;
      f.args.sig = c_.cfg_.desync_check
                       ? op::make_signature(op::CollKind::kAllReduce, f.args.dtype, total,
                                              f.args.op, true, 0, false)
                       : 0;
      // Its own flight-recorder entry (the members show algo=fused).
      diag::OpIdentity id;
      id.seq = f.args.seq;
      id.name = f.name;
      id.dtype = chorus::to_string(f.args.dtype);
      id.redop = chorus::to_string(f.args.op);
      id.count = total;
      id.bytes = total * dtype_size(f.args.dtype);
      id.stream = f.stream_label;
      f.rec = c_.recorder_->issue(id);
      c_.choose(f);
    }
  }

  Status transfer_failed(IssuedOp& o, const Status& s) {
    return c_.fail(p2p_failure(s, o),
                   c_.op_context(o), o.rec);
  }

  void post_transfers() {
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      IssuedOp& o = op(i);
      if (!o.p2p) continue;
      Status s = c_.failure_.refuse(o.name, o.seq());
      if (!s.is_ok()) {
        result_[i] = c_.drop(o, std::move(s));
        continue;
      }
      c_.recorder_->start(o.rec, "p2p");
      o.tag.sig = c_.order_flag(o.tag.sig);
      auto r = o.sending ? c_.transport_->post_send(o.peer, o.tag, o.buf, o.bytes)
                         : c_.transport_->post_recv(o.peer, o.tag, o.buf, o.bytes);
      if (r.has_value()) reqs_[i] = std::move(*r);
      else result_[i] = transfer_failed(o, r.status());
    }
  }

  void run_unit(Unit& u) {
    if (u.members.size() == 1) {
      result_[u.members[0]] = c_.execute(op(u.members[0]));
      return;
    }
    IssuedOp& f = u.fused;
    const std::size_t esz = dtype_size(f.args.dtype);
    u.packed.resize(f.args.count * esz);
    std::size_t off = 0;
    for (std::size_t m : u.members) {
      const op::CollArgs& a = op(m).args;
      std::memcpy(u.packed.data() + off, a.send, a.count * esz);
      off += a.count * esz;
      c_.recorder_->start(op(m).rec, "fused");
    }
    f.args.send = f.args.recv = u.packed.data();
    const Status s = c_.execute(f);
    off = 0;
    for (std::size_t m : u.members) {
      const op::CollArgs& a = op(m).args;
      if (s.is_ok()) std::memcpy(a.recv, u.packed.data() + off, a.count * esz);
      off += a.count * esz;
      if (s.is_ok()) c_.recorder_->done(op(m).rec);
      else c_.recorder_->failed(op(m).rec, s.message());
      result_[m] = s;
    }
  }

  void wait_transfers(Deadline deadline) {
    std::vector<transport::Request*> pending;
    for (const auto& r : reqs_)
      if (r) pending.push_back(r.get());
    if (pending.empty()) return;
    const Status waited = c_.transport_->wait(pending, deadline);
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      if (!reqs_[i]) continue;
      Status s = reqs_[i]->done() ? reqs_[i]->status() : waited;
      if (s.is_ok() && !reqs_[i]->done())
        s = internal_error("transfer still pending after the group's wait");
      if (s.is_ok()) c_.recorder_->done(op(i).rec);
      else result_[i] = transfer_failed(op(i), s);
    }
  }

  CommImpl& c_;
  std::vector<std::unique_ptr<PendingOp>>& ops_;
  std::vector<Status> result_;
  std::vector<transport::RequestPtr> reqs_;
  std::vector<Unit> units_;
};

Status CommImpl::run_group(std::vector<std::unique_ptr<PendingOp>>& ops) {
  return GroupRun(*this, ops).run();
}

}  // namespace chorus::core
