// TCP engine failure propagation: abort frames sent to every peer and received from them,
// and operation-signature mismatches (kDesync) reported to both sides of a message.
#include <sys/socket.h>

#include <algorithm>

#include "diag/log.h"
#include "transport/tcp/engine.h"
#include "util/strings.h"

namespace chorus::tcp {

namespace {

template <class C>
Op* take_rdv(C& c, std::uint64_t id) {
  auto it = std::find_if(c.begin(), c.end(), [&](Op* op) { return op->rdv_id == id; });
  if (it == c.end()) return nullptr;
  Op* op = *it;
  c.erase(it);
  return op;
}

// Reason text from the wire: printable ASCII only, so a hostile peer cannot put
// terminal escapes or NULs into our messages.
std::string printable(const std::vector<std::uint8_t>& bytes) {
  std::string s;
  s.reserve(bytes.size());
  for (std::uint8_t c : bytes) s.push_back(c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?');
  return s;
}

}  // namespace

Status Engine::abort_status() const {
  std::lock_guard<std::mutex> g(abort_mu_);
  return abort_status_;
}

bool Engine::begin_abort(const Status& st, int origin, const std::string& text) {
  std::lock_guard<std::mutex> g(abort_mu_);
  if (aborted_.load()) return false;
  abort_status_ = st;
  abort_origin_ = origin;
  abort_text_ = text.substr(0, kMaxAbortReasonBytes);
  aborted_.store(true, std::memory_order_release);
  return true;
}

void Engine::abort(const Status& reason) {
  Status st = reason.is_ok() ? Status(ErrorCode::kAborted, "transport aborted") : reason;
  if (!begin_abort(st, rank_, st.message())) return;
  CHORUS_LOG(INFO, Net, "rank %d: TCP transport aborted: %s", rank_, st.to_string().c_str());
  wake();  // the polling thread leaves poll() and sees the flag
  std::lock_guard<std::mutex> lk(mu_);
  broadcast_abort_locked();
}

void Engine::broadcast_abort_locked() {
  const Status st = abort_status();
  std::string text;
  int origin;
  {
    std::lock_guard<std::mutex> g(abort_mu_);
    text = abort_text_;
    origin = abort_origin_;
  }
  for (Peer& p : peers_) {
    if (p.rank == rank_ || !p.fd.valid()) continue;
    drop_pending(p, st);
    if (p.is_failed()) continue;  // its connection is gone already
    FrameHeader h;
    h.kind = FrameKind::kAbort;
    h.job_token = job_token_;
    h.tag.step = static_cast<std::uint32_t>(origin);
    h.length = text.size();
    h.arg = abort_arg(st.code(), st.peer());
    h.progress = progress_.load(std::memory_order_relaxed);
    OutFrame& f = p.out.emplace_back();
    f.kind = FrameKind::kAbort;
    f.owned.assign(text.begin(), text.end());
    f.payload = f.owned.data();
    f.payload_len = f.owned.size();
    encode_frame(h, f.hdr);
    write_peer(p);  // non-blocking; close() flushes what is left
    if (!p.is_failed() && p.out.empty()) ::shutdown(p.fd.get(), SHUT_WR);
  }
  cv_.notify_all();
}

void Engine::on_abort_frame(Peer& p) {
  const FrameHeader& h = p.in_frame;
  const auto code = static_cast<ErrorCode>(static_cast<std::uint32_t>(h.arg));
  const auto culprit_plus_one = static_cast<std::uint32_t>(h.arg >> 32);
  const int culprit = culprit_plus_one >= 1 && culprit_plus_one <= static_cast<std::uint32_t>(size_)
                          ? static_cast<int>(culprit_plus_one) - 1
                          : -1;
  const int origin = h.tag.step < static_cast<std::uint32_t>(size_) ? static_cast<int>(h.tag.step)
                                                                    : p.rank;
  const std::string text = printable(p.in_buf);
  p.in_buf = {};
  Status st(code, str_printf("rank %d reports: %s", origin, text.c_str()),
            culprit >= 0 ? culprit : origin);
  if (!begin_abort(st, origin, text)) return;
  CHORUS_LOG(WARN, Net, "rank %d: aborted by peer rank %d (%s): %s", rank_, p.rank,
             p.address.c_str(), st.to_string().c_str());
  // Tell the others too, in case the first reporter could not reach them.
  broadcast_abort_locked();
}

void Engine::flush_after_abort(std::unique_lock<std::mutex>& lk) {
  constexpr int kFlushMs = 200;
  const Deadline limit = Deadline::after(std::chrono::milliseconds(kFlushMs));
  std::vector<pollfd> pfds;
  for (;;) {
    pfds.clear();
    for (Peer& p : peers_) {
      if (p.rank == rank_ || p.is_failed() || !p.fd.valid() || p.out.empty()) continue;
      write_peer(p);
      if (p.is_failed()) continue;
      if (p.out.empty()) ::shutdown(p.fd.get(), SHUT_WR);
      else pfds.push_back(pollfd{p.fd.get(), POLLOUT, 0});
    }
    if (pfds.empty() || limit.expired()) return;
    lk.unlock();
    ::poll(pfds.data(), pfds.size(), limit.remaining_ms(kFlushMs));
    lk.lock();
  }
}

std::string Engine::describe(std::uint64_t sig) const {
  if (describe_sig_ != nullptr) return describe_sig_(sig);
  return str_printf("signature 0x%016llx", static_cast<unsigned long long>(sig));
}

Status Engine::signature_status(const Peer& p, const transport::Tag& tag, std::uint64_t mine,
                                std::uint64_t theirs, bool receiver) const {
  const auto seq = static_cast<unsigned long long>(tag.seq);
  const std::string m = describe(mine), t = describe(theirs);
  std::string text =
      receiver ? str_printf("rank %d expected %s seq %llu from peer rank %d (%s), which sent %s "
                            "seq %llu (tag comm %u step %u)",
                            rank_, m.c_str(), seq, p.rank, p.address.c_str(), t.c_str(), seq,
                            tag.comm, tag.step)
               : str_printf("rank %d sent %s seq %llu to peer rank %d (%s), which expected %s "
                            "seq %llu (tag comm %u step %u)",
                            rank_, m.c_str(), seq, p.rank, p.address.c_str(), t.c_str(), seq,
                            tag.comm, tag.step);
  return Status(ErrorCode::kDesync, std::move(text), p.rank, static_cast<std::int64_t>(tag.seq));
}

void Engine::reject_signature(Peer& p, Op* op, const transport::Tag& msg, std::uint64_t rdv_id) {
  complete(op, signature_status(p, msg, op->tag.sig, msg.sig, /*receiver=*/true));
  cv_.notify_all();
  if (p.is_failed()) return;
  FrameHeader h;
  h.kind = FrameKind::kDesync;
  h.job_token = job_token_;
  h.tag = msg;
  h.tag.sig = op->tag.sig;
  h.peer_sig = msg.sig;
  h.arg = rdv_id;
  OutFrame& f = p.out.emplace_back();
  f.kind = FrameKind::kDesync;
  f.rdv_id = rdv_id;
  encode_frame(h, f.hdr);
}

void Engine::on_desync(Peer& p, const FrameHeader& h) {
  transport::Tag msg = h.tag;
  Status st = signature_status(p, msg, h.peer_sig, h.tag.sig, /*receiver=*/false);
  CHORUS_LOG(WARN, Net, "rank %d: %s", rank_, st.message().c_str());
  if (h.arg != 0)
    if (Op* op = take_rdv(p.await_cts, h.arg)) complete(op, st);
  // The message may have gone eagerly (its request already succeeded): every pending and
  // later request with this peer fails instead, so the sender learns in any case.
  if (p.desynced.is_ok()) p.desynced = st;
  drop_pending(p, st);
}

Status Engine::overtaken_status(const Peer& p, const Op& op, const transport::Tag& later) const {
  return transport::overtaken_receive(rank_, op.tag, p.rank, p.address, later,
                                      describe(op.tag.sig), describe(later.sig));
}

void Engine::fail_overtaken(Peer& p, const transport::Tag& later) {
  for (auto it = p.posted.begin(); it != p.posted.end();) {
    Op* op = *it;
    if (later.overtakes(op->tag)) {
      it = p.posted.erase(it);
      complete(op, overtaken_status(p, *op, later));
      cv_.notify_all();
    } else {
      ++it;
    }
  }
}

void Engine::fail_foreign(Peer& p, const transport::Tag& msg) {
  for (Peer& q : peers_) {
    std::erase_if(q.posted, [&](Op* op) {
      if (!transport::disagree(msg, op->tag)) return false;
      complete(op, foreign_status(p, msg, op->tag.sig));
      cv_.notify_all();
      return true;
    });
  }
}

bool Engine::foreign(Op* op) {
  Status st = held_disagreement(op->tag);
  if (st.is_ok()) return false;
  complete(op, std::move(st));
  return true;
}

Status Engine::held_disagreement(const transport::Tag& tag) const {
  for (const Peer& q : peers_) {
    for (const Unexpected& u : q.unexpected)
      if (transport::disagree(u.tag, tag)) return foreign_status(q, u.tag, tag.sig);
    for (const Ready& r : q.ready)
      if (transport::disagree(r.tag, tag)) return foreign_status(q, r.tag, tag.sig);
  }
  return Status::ok();
}

Status Engine::disagreement(const transport::Tag& tag) {
  poke();
  std::lock_guard<std::mutex> lk(mu_);
  return held_disagreement(tag);
}

Status Engine::foreign_status(const Peer& p, const transport::Tag& msg,
                              std::uint64_t mine) const {
  return transport::foreign_message(rank_, p.rank, p.address, msg, describe(mine), describe(msg.sig));
}

bool Engine::overtaken(Peer& p, Op* op) {
  for (const Unexpected& u : p.unexpected) {
    if (u.tag.overtakes(op->tag)) {
      complete(op, overtaken_status(p, *op, u.tag));
      return true;
    }
  }
  return false;
}

}  // namespace chorus::tcp
