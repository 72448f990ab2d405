// Engine matching: receives against held messages and incoming messages against posted
// receives, and the operation mismatches (kDesync) matching can prove.
#include <algorithm>
#include <cstring>

#include "transport/engine/engine.h"
#include "util/strings.h"

namespace chorus::engine {

Op* Engine::take_posted(PeerState& p, const transport::Tag& tag) {
  auto it = std::find_if(p.posted.begin(), p.posted.end(),
                         [&](const Op* op) { return op->tag.matches(tag); });
  if (it == p.posted.end()) {
    fail_overtaken(p, tag);
    fail_foreign(p, tag);
    return nullptr;
  }
  Op* op = *it;
  p.posted.erase(it);
  return op;
}

bool Engine::accepts(PeerState& p, Op* op, const Unexpected& msg) {
  if (msg.length == op->bytes && !transport::signatures_differ(msg.tag.sig, op->tag.sig))
    return true;
  complete(op, mismatch(p, msg.tag, msg.length, *op));
  if (!p.is_failed()) refuse(p, msg, *op);
  return false;
}

bool Engine::take_unexpected(PeerState& p, Op* op) {
  auto it = std::find_if(p.unexpected.begin(), p.unexpected.end(),
                         [&](const Unexpected& u) { return u.tag.matches(op->tag); });
  if (it == p.unexpected.end()) return false;
  Unexpected u = std::move(*it);
  p.unexpected.erase(it);
  if (!accepts(p, op, u)) return true;
  if (u.offer) {
    accept_offer(p, op, u);
  } else {
    if (u.length > 0) std::memcpy(op->recv_data, u.data.data(), u.length);
    complete(op, Status::ok());
  }
  recycle(std::move(u.data));
  return true;
}

std::vector<std::uint8_t> Engine::buffer(std::size_t bytes) {
  std::vector<std::uint8_t> b;
  for (auto it = spare_.begin(); it != spare_.end(); ++it) {
    if (it->capacity() < bytes) continue;
    spare_bytes_ -= it->capacity();
    b = std::move(*it);
    spare_.erase(it);
    break;
  }
  b.resize(bytes);  // no write where the spare was that long already
  return b;
}

void Engine::recycle(std::vector<std::uint8_t>&& b) {
  // Enough for a sender that ran ahead by a ring's worth of small messages (they are all
  // copied out of the ring into buffers before the receiver takes the first).
  constexpr std::size_t kMaxBytes = std::size_t(2) << 20;
  if (b.capacity() == 0 || b.capacity() > kMaxBytes) return;
  while (!spare_.empty() && spare_bytes_ + b.capacity() > kMaxBytes) {
    spare_bytes_ -= spare_.front().capacity();
    spare_.erase(spare_.begin());
  }
  spare_bytes_ += b.capacity();
  spare_.push_back(std::move(b));
}

void Engine::hold(PeerState& p, Unexpected u) {
  p.unexpected.push_back(std::move(u));
  auto it = std::find_if(p.posted.begin(), p.posted.end(),
                         [&](const Op* op) { return op->tag.matches(p.unexpected.back().tag); });
  if (it == p.posted.end()) return;
  Op* op = *it;
  p.posted.erase(it);
  take_unexpected(p, op);
}

bool Engine::overtaken(PeerState& p, Op* op) {
  auto later = [&](const transport::Tag& t) { return t.overtakes(op->tag); };
  for (const Unexpected& u : p.unexpected) {
    if (later(u.tag)) {
      complete(op, overtaken_status(p, *op, u.tag));
      return true;
    }
  }
  if (const transport::Tag* t = parked(p); t != nullptr && later(*t)) {
    complete(op, overtaken_status(p, *op, *t));
    return true;
  }
  return false;
}

void Engine::fail_overtaken(PeerState& p, const transport::Tag& later) {
  std::erase_if(p.posted, [&](Op* op) {
    if (!later.overtakes(op->tag)) return false;
    complete(op, overtaken_status(p, *op, later));
    return true;
  });
}

void Engine::fail_foreign(PeerState& p, const transport::Tag& msg) {
  for (int r = 0; r < size_; ++r) {
    std::erase_if(peer(r).posted, [&](Op* op) {
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
  for (int r = 0; r < size_; ++r) {
    const PeerState& q = peer(r);
    for (const Unexpected& u : q.unexpected)
      if (transport::disagree(u.tag, tag)) return foreign_status(q, u.tag, tag.sig);
    if (const transport::Tag* t = parked(q); t != nullptr && transport::disagree(*t, tag))
      return foreign_status(q, *t, tag.sig);
  }
  return held_elsewhere(tag);
}

Status Engine::disagreement(const transport::Tag& tag) {
  poke();
  std::lock_guard<std::mutex> lk(mu_);
  return held_disagreement(tag);
}

std::string Engine::describe(std::uint64_t sig) const {
  if (describe_sig_ != nullptr) return describe_sig_(sig);
  return str_printf("signature 0x%016llx", static_cast<unsigned long long>(sig));
}

Status Engine::foreign_status(const PeerState& p, const transport::Tag& msg,
                              std::uint64_t mine) const {
  return transport::foreign_message(name_, p.name, p.address, msg, describe(mine),
                                    describe(msg.sig));
}

Status Engine::overtaken_status(const PeerState& p, const Op& op,
                                const transport::Tag& later) const {
  return transport::overtaken_receive(name_, op.tag, p.name, p.address, later,
                                      describe(op.tag.sig), describe(later.sig));
}

Status Engine::signature_status(const PeerState& p, const transport::Tag& tag, std::uint64_t mine,
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

Status Engine::size_status(const PeerState& p, const transport::Tag& tag, std::uint64_t got,
                           std::uint64_t expected) const {
  return Status(ErrorCode::kDesync,
                str_printf("message from peer rank %d (%s) with tag comm %u seq %llu step %u is "
                           "%llu bytes, but the posted receive expects %llu bytes",
                           p.name, p.address.c_str(), tag.comm,
                           static_cast<unsigned long long>(tag.seq), tag.step,
                           static_cast<unsigned long long>(got),
                           static_cast<unsigned long long>(expected)),
                p.name, static_cast<std::int64_t>(tag.seq));
}

Status Engine::mismatch(const PeerState& p, const transport::Tag& got, std::uint64_t got_len,
                        const Op& op) const {
  if (transport::signatures_differ(got.sig, op.tag.sig))
    return signature_status(p, got, op.tag.sig, got.sig, /*receiver=*/true);
  return size_status(p, got, got_len, op.bytes);
}

Status Engine::refusal_status(const PeerState& p, const transport::Tag& tag, std::uint64_t mine,
                              std::uint64_t theirs, std::uint64_t expected,
                              long long sent) const {
  if (transport::signatures_differ(mine, theirs))
    return signature_status(p, tag, mine, theirs, /*receiver=*/false);
  const std::string what = sent >= 0 ? str_printf("%lld bytes", sent) : "a different size";
  return Status(ErrorCode::kDesync,
                str_printf("peer rank %d (%s) expected %llu bytes for tag comm %u seq %llu step "
                           "%u, but this rank sent %s",
                           p.name, p.address.c_str(), static_cast<unsigned long long>(expected),
                           tag.comm, static_cast<unsigned long long>(tag.seq), tag.step,
                           what.c_str()),
                p.name, static_cast<std::int64_t>(tag.seq));
}

}  // namespace chorus::engine
