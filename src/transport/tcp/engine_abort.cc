// TCP medium failure propagation: abort frames sent to every peer and received from
// them, desync frames (a receiver refused one of our messages), held announcements that
// prove a disagreement, and the bounded flush of abort frames on close.
#include <sys/socket.h>

#include <algorithm>

#include "transport/tcp/engine.h"
#include "util/strings.h"

namespace chorus::tcp {

namespace {
// Reason text from the wire: printable ASCII only, so a hostile peer cannot put
// terminal escapes or NULs into our messages.
std::string printable(const std::vector<std::uint8_t>& bytes) {
  std::string s;
  s.reserve(bytes.size());
  for (std::uint8_t c : bytes) s.push_back(c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?');
  return s;
}
}  // namespace

// Best effort: written without blocking; what the socket does not take now is flushed,
// bounded, by close(). The connections are half-closed once their frames are out.
void Engine::announce_abort() {
  const AbortReason a = abort_reason();
  for (Peer& p : peers_) {
    if (p.rank == rank_ || !p.fd.valid() || p.is_failed()) continue;
    FrameHeader h;
    h.kind = FrameKind::kAbort;
    h.job_token = job_token_;
    h.tag.step = static_cast<std::uint32_t>(a.origin);
    h.length = a.text.size();
    h.arg = abort_arg(a.status.code(), a.status.peer());
    h.progress = progress_.load(std::memory_order_relaxed);
    OutFrame& f = p.out.emplace_back();
    f.kind = FrameKind::kAbort;
    f.owned.assign(a.text.begin(), a.text.end());
    f.payload = f.owned.data();
    f.payload_len = f.owned.size();
    encode_frame(h, f.hdr);
    write_peer(p);
    if (!p.is_failed() && p.out.empty()) ::shutdown(p.fd.get(), SHUT_WR);
  }
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
  // The frame's header carries its sender's progress: the origin's when it sent it.
  adopt_abort(p, code, origin, culprit, text, origin == p.name ? p.progress : 0);
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

void Engine::on_desync(Peer& p, const FrameHeader& h) {
  Status st = signature_status(p, h.tag, h.peer_sig, h.tag.sig, /*receiver=*/false);
  if (h.arg != 0) {
    auto it = std::find_if(p.await_cts.begin(), p.await_cts.end(),
                           [&](const Op* op) { return op->id == h.arg; });
    if (it != p.await_cts.end()) {
      Op* op = *it;
      p.await_cts.erase(it);
      complete(op, st);
    }
  }
  refused_by(p, st);
}

Status Engine::held_elsewhere(const transport::Tag& tag) const {
  for (const Peer& q : peers_)
    for (const Ready& r : q.ready)
      if (transport::disagree(r.tag, tag))
        return foreign_status(q, r.tag, tag.sig);
  return Status::ok();
}

}  // namespace chorus::tcp
