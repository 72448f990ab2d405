// Shared-memory engine failure propagation: abort words published in the rank slots (and
// forwarded), operation mismatches (kDesync) reported to both sides of a message, and
// receives overtaken by a later operation of the same peer.
#include <algorithm>
#include <cstring>

#include "diag/log.h"
#include "transport/shm/doorbell.h"
#include "transport/shm/engine.h"
#include "util/strings.h"

namespace chorus::shm {

Status Engine::abort_status() const {
  std::lock_guard<std::mutex> g(abort_mu_);
  return abort_status_;
}

bool Engine::begin_abort(const Status& st, int origin, const std::string& text) {
  std::lock_guard<std::mutex> g(abort_mu_);
  if (aborted_.load()) return false;
  abort_status_ = st;
  abort_origin_ = origin;
  abort_text_ = text.substr(0, kReasonBytes - 1);
  aborted_.store(true, std::memory_order_release);
  return true;
}

void Engine::publish_abort() {
  Status st;
  std::string text;
  int origin;
  {
    std::lock_guard<std::mutex> g(abort_mu_);
    st = abort_status_;
    text = abort_text_;
    origin = abort_origin_;
  }
  std::memcpy(me_.abort_reason, text.data(), text.size());
  me_.abort_reason[text.size()] = '\0';
  me_.abort_code.store(static_cast<std::int32_t>(st.code()), std::memory_order_relaxed);
  me_.abort_origin.store(origin, std::memory_order_relaxed);
  me_.abort_peer.store(st.peer(), std::memory_order_relaxed);
  me_.state.store(kAborted, std::memory_order_release);
  for (int r = 0; r < size_; ++r)
    if (r != rank_) ring_doorbell(seg_.slot(r));
  ring_doorbell(me_);  // our own sleeping poller
  cv_.notify_all();
}

void Engine::abort(const Status& reason) {
  Status st = reason.is_ok() ? Status(ErrorCode::kAborted, "transport aborted") : reason;
  if (!begin_abort(st, name_, st.message())) return;
  CHORUS_LOG(INFO, Net, "rank %d: shm transport aborted: %s", name_, st.to_string().c_str());
  publish_abort();
}

void Engine::on_peer_abort(const Peer& p) {
  const RankSlot& s = seg_.slot(p.rank);
  // Printable ASCII only: the text comes from another process.
  std::string text(s.abort_reason, strnlen(s.abort_reason, kReasonBytes));
  for (char& c : text)
    if (c < 0x20 || c >= 0x7f) c = '?';
  const auto code = static_cast<ErrorCode>(s.abort_code.load(std::memory_order_relaxed));
  int origin = s.abort_origin.load(std::memory_order_relaxed);
  if (origin < 0 || origin >= names_) origin = p.name;
  int culprit = s.abort_peer.load(std::memory_order_relaxed);
  if (culprit < 0 || culprit >= names_) culprit = origin;
  Status st(code, str_printf("rank %d reports: %s", origin, text.c_str()), culprit);
  if (!begin_abort(st, origin, text)) return;
  CHORUS_LOG(WARN, Net, "rank %d: aborted by peer rank %d (%s): %s", name_, p.name,
             p.address.c_str(), st.to_string().c_str());
  // Forwarded in our own slot too (as TCP does), with the first reporter kept.
  publish_abort();
}

void Engine::drop_pending(Peer& p, const Status& st) {
  for (Op* op : p.posted) complete(op, st);
  p.posted.clear();
  if (p.in_op != nullptr) {
    complete(std::exchange(p.in_op, nullptr), st);
    p.sink = Peer::Sink::kDiscard;  // the rest of the payload is read and dropped
  }
  std::deque<OutItem> keep;
  for (OutItem& it : p.out) {
    if (it.hdr_done) {  // the ring must stay well formed: finish the record from a copy
      if (it.op != nullptr) {
        it.owned.assign(it.payload, it.payload + it.hdr.length);
        it.payload = it.owned.data();
        complete(std::exchange(it.op, nullptr), st);
      }
      keep.push_back(std::move(it));
    } else if (it.op != nullptr) {
      complete(it.op, st);  // not started: dropped
    } else {
      keep.push_back(std::move(it));  // NACKs and copies of cancelled sends
    }
  }
  p.out.swap(keep);
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
                            name_, m.c_str(), seq, p.name, p.address.c_str(), t.c_str(), seq,
                            tag.comm, tag.step)
               : str_printf("rank %d sent %s seq %llu to peer rank %d (%s), which expected %s "
                            "seq %llu (tag comm %u step %u)",
                            name_, m.c_str(), seq, p.name, p.address.c_str(), t.c_str(), seq,
                            tag.comm, tag.step);
  return Status(ErrorCode::kDesync, std::move(text), p.name, static_cast<std::int64_t>(tag.seq));
}

Status Engine::mismatch(const Peer& p, const transport::Tag& got, std::uint64_t got_len,
                        const transport::Tag& want, std::size_t want_len) const {
  if (transport::signatures_differ(got.sig, want.sig))
    return signature_status(p, got, want.sig, got.sig, /*receiver=*/true);
  return Status(ErrorCode::kDesync,
                str_printf("message from peer rank %d (%s) with tag comm %u seq %llu step %u is "
                           "%llu bytes, but the posted receive expects %zu bytes",
                           p.name, p.address.c_str(), got.comm,
                           static_cast<unsigned long long>(got.seq), got.step,
                           static_cast<unsigned long long>(got_len), want_len),
                p.name, static_cast<std::int64_t>(got.seq));
}

// The receiver of one of our messages found it does not fit its receive. The send fails
// if still pending; in any case every pending and later request with that peer fails
// too, so the sender learns it even when the message already went.
void Engine::on_nack(Peer& p, const RecHeader& h) {
  const transport::Tag tag = h.tag();
  Status st = h.sig != 0 && h.arg != 0 && h.sig != h.arg
                  ? signature_status(p, tag, h.sig, h.arg, /*receiver=*/false)
                  : Status(ErrorCode::kDesync,
                           str_printf("peer rank %d (%s) expected %llu bytes for tag comm %u seq "
                                      "%llu step %u, but this rank sent a different size",
                                      p.name, p.address.c_str(),
                                      static_cast<unsigned long long>(h.length), tag.comm,
                                      static_cast<unsigned long long>(tag.seq), tag.step),
                           p.name, static_cast<std::int64_t>(tag.seq));
  CHORUS_LOG(WARN, Net, "rank %d: %s", name_, st.message().c_str());
  if (p.desynced.is_ok()) p.desynced = st;
  drop_pending(p, st);
}

Status Engine::overtaken_status(const Peer& p, const Op& op, const transport::Tag& later) const {
  return transport::overtaken_receive(name_, op.tag, p.name, p.address, later,
                                      describe(op.tag.sig), describe(later.sig));
}

void Engine::fail_overtaken(Peer& p, const transport::Tag& later) {
  for (auto it = p.posted.begin(); it != p.posted.end();) {
    Op* op = *it;
    if (later.overtakes(op->tag)) {
      it = p.posted.erase(it);
      complete(op, overtaken_status(p, *op, later));
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
    // A large message parked at the head of the ring counts too.
    if (q.have_hdr && q.sink == Peer::Sink::kUndecided && transport::disagree(q.in_hdr.tag(), tag))
      return foreign_status(q, q.in_hdr.tag(), tag.sig);
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
  return transport::foreign_message(name_, p.name, p.address, msg, describe(mine), describe(msg.sig));
}

bool Engine::overtaken(Peer& p, Op* op) {
  auto later = [&](const transport::Tag& t) { return t.overtakes(op->tag); };
  for (const Unexpected& u : p.unexpected) {
    if (later(u.tag)) {
      complete(op, overtaken_status(p, *op, u.tag));
      return true;
    }
  }
  // A large message parked at the head of the ring counts too.
  if (p.have_hdr && p.sink == Peer::Sink::kUndecided && later(p.in_hdr.tag())) {
    complete(op, overtaken_status(p, *op, p.in_hdr.tag()));
    return true;
  }
  return false;
}

}  // namespace chorus::shm
