// CommImpl's groups: the operations recorded between group_start() and group_end() run as
// one unit on the caller's thread: every point-to-point transfer is posted first
// (non-blocking requests), then the collectives run in issue order, consecutive
// compatible all_reduces fused into one over a packed buffer, then the transfers are
// waited for. Posting all transfers before waiting on any is what makes every order of
// sends and receives across ranks safe (e.g. all send right and receive left, with
// messages large enough for rendezvous).
#include <cstring>

#include "algo/signature.h"
#include "core/comm_impl.h"
#include "util/strings.h"

namespace chorus::core {

namespace {

struct Range {
  const char* lo;
  const char* hi;
};

bool overlaps(Range a, Range b) { return a.lo < b.hi && b.lo < a.hi; }

Range range_of(const void* p, std::size_t bytes) {
  const char* c = static_cast<const char*>(p);
  return Range{c, c + bytes};
}

// One collective to run: a recorded op, or several all_reduces fused into one.
struct Unit {
  std::vector<std::size_t> members;  // indices into the group's operations
  IssuedOp fused;                    // the fused all_reduce (members.size() > 1)
  std::vector<char> packed;          // its buffer
};

bool is_plain_all_reduce(const IssuedOp& op) {
  return !op.p2p && op.kind == algo::CollKind::kAllReduce && op.args.count > 0 &&
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
  const Range ns = range_of(next.args.send, nb), nr = range_of(next.args.recv, nb);
  for (std::size_t m : members) {
    const algo::CollArgs& a = ops[m]->op.args;
    const std::size_t b = a.count * dtype_size(a.dtype);
    const Range s = range_of(a.send, b), r = range_of(a.recv, b);
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
  // Earlier operations of the streams the group uses (and of the default stream, where
  // the group runs) finish first.
  sync_default_stream();
  for (const auto& p : ops) streams_[p->op.stream]->wait_idle();
  return run_group(ops);
}

Status CommImpl::run_group(std::vector<std::unique_ptr<PendingOp>>& ops) {
  const std::size_t n = ops.size();
  std::vector<Status> result(n);
  // Algorithms and window tickets, in issue order (identical on every rank).
  std::vector<Unit> units = plan_units(ops);
  for (Unit& u : units) {
    if (u.members.size() == 1) {
      choose(ops[u.members[0]]->op);
      continue;
    }
    IssuedOp& f = u.fused;
    f = ops[u.members[0]]->op;
    f.name = "fused_all_reduce";
    std::size_t total = 0;
    for (std::size_t m : u.members) total += ops[m]->op.args.count;
    f.args.count = total;
    f.args.sig = cfg_.desync_check ? algo::make_signature(algo::CollKind::kAllReduce,
                                                          f.args.dtype, total, f.args.op, true,
                                                          0, false)
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
    f.rec = recorder_->issue(id);
    choose(f);
  }

  // 1. Post every transfer.
  const Deadline deadline = Deadline::after(cfg_.timeout);
  std::vector<transport::RequestPtr> reqs(n);
  for (std::size_t i = 0; i < n; ++i) {
    IssuedOp& op = ops[i]->op;
    if (!op.p2p) continue;
    Status s = refuse(op.name, op.tag.seq);
    if (!s.is_ok()) {
      result[i] = drop(op, std::move(s));
      continue;
    }
    recorder_->start(op.rec, "p2p");
    op.tag.sig = order_flag(op.tag.sig);
    auto r = op.sending ? transport_->post_send(op.peer, op.tag, op.buf, op.bytes)
                        : transport_->post_recv(op.peer, op.tag, op.buf, op.bytes);
    if (r.has_value()) {
      reqs[i] = std::move(*r);
    } else {
      result[i] = fail(r.status().with_peer(op.peer).with_seq(static_cast<std::int64_t>(op.tag.seq)),
                       op_context(op), op.rec);
    }
  }

  // 2. The collectives, in issue order.
  for (Unit& u : units) {
    if (u.members.size() == 1) {
      result[u.members[0]] = execute(ops[u.members[0]]->op);
      continue;
    }
    IssuedOp& f = u.fused;
    const std::size_t esz = dtype_size(f.args.dtype);
    u.packed.resize(f.args.count * esz);
    std::size_t off = 0;
    for (std::size_t m : u.members) {
      const algo::CollArgs& a = ops[m]->op.args;
      std::memcpy(u.packed.data() + off, a.send, a.count * esz);
      off += a.count * esz;
      recorder_->start(ops[m]->op.rec, "fused");
    }
    f.args.send = f.args.recv = u.packed.data();
    const Status s = execute(f);
    off = 0;
    for (std::size_t m : u.members) {
      const algo::CollArgs& a = ops[m]->op.args;
      if (s.is_ok()) std::memcpy(a.recv, u.packed.data() + off, a.count * esz);
      off += a.count * esz;
      if (s.is_ok()) recorder_->done(ops[m]->op.rec);
      else recorder_->failed(ops[m]->op.rec, s.message());
      result[m] = s;
    }
  }

  // 3. Wait for the transfers.
  std::vector<transport::Request*> pending;
  for (const auto& r : reqs)
    if (r) pending.push_back(r.get());
  const Status waited = pending.empty() ? Status::ok() : transport_->wait(pending, deadline);
  for (std::size_t i = 0; i < n; ++i) {
    if (!reqs[i]) continue;
    IssuedOp& op = ops[i]->op;
    Status s = reqs[i]->done() ? reqs[i]->status() : waited;
    if (s.is_ok() && !reqs[i]->done())
      s = internal_error("transfer still pending after the group's wait");
    if (s.is_ok()) {
      recorder_->done(op.rec);
      continue;
    }
    result[i] = fail(s.with_peer(op.peer).with_seq(static_cast<std::int64_t>(op.tag.seq)),
                     op_context(op), op.rec);
  }
  reqs.clear();  // cancels what is left before the buffers are released to the caller
  retire(static_cast<std::int64_t>(n));

  Status first;
  for (std::size_t i = 0; i < n; ++i) {
    if (first.is_ok() && !result[i].is_ok()) first = result[i];
    if (ops[i]->work) ops[i]->work->complete(result[i]);
  }
  return first;
}

}  // namespace chorus::core
