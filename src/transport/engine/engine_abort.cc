// Engine abort state: the first abort wins (ours or a peer's, adopted and forwarded);
// the medium carries it to the peers (announce_abort).
#include "diag/log.h"
#include "transport/engine/engine.h"
#include "util/strings.h"

namespace chorus::engine {

Status Engine::abort_status() const {
  std::lock_guard<std::mutex> g(abort_mu_);
  return abort_.status;
}

Engine::AbortReason Engine::abort_reason() const {
  std::lock_guard<std::mutex> g(abort_mu_);
  return abort_;
}

Status Engine::abort_for(std::uint64_t seq) const {
  if (!aborted()) return Status::ok();
  std::lock_guard<std::mutex> g(abort_mu_);
  return seq < abort_.origin_done ? Status::ok() : abort_.status;
}

bool Engine::begin_abort(const Status& st, int origin, const std::string& text,
                         std::uint64_t origin_done) {
  std::lock_guard<std::mutex> g(abort_mu_);
  if (aborted_.load()) return false;
  abort_.status = st;
  abort_.origin = origin;
  abort_.origin_done = origin_done;
  abort_.text = text.substr(0, max_reason_bytes_);
  aborted_.store(true, std::memory_order_release);
  return true;
}

void Engine::abort(const Status& reason) {
  Status st = reason.is_ok() ? Status(ErrorCode::kAborted, "transport aborted") : reason;
  if (!begin_abort(st, name_, st.message())) return;
  CHORUS_LOG(INFO, Net, "rank %d: %s transport aborted: %s", name_, medium_,
             st.to_string().c_str());
  wake();  // a thread blocked in progress() sees the flag
  std::lock_guard<std::mutex> lk(mu_);
  for (int r = 0; r < size_; ++r)
    if (r != rank_) drop_pending(peer(r), st);
  announce_abort();
  cv_.notify_all();
}

void Engine::adopt_abort(const PeerState& from, ErrorCode code, int origin, int culprit,
                         const std::string& text, std::uint64_t origin_done) {
  if (origin < 0 || origin >= names_) origin = from.name;
  if (culprit < 0 || culprit >= names_) culprit = origin;
  Status st(code, str_printf("rank %d reports: %s", origin, text.c_str()), culprit);
  if (!begin_abort(st, origin, text, origin_done)) return;
  CHORUS_LOG(WARN, Net, "rank %d: aborted by peer rank %d (%s): %s", name_, from.name,
             from.address.c_str(), st.to_string().c_str());
  // Forwarded to every peer too, in case the first reporter could not reach them, with
  // the first reporter kept.
  for (int r = 0; r < size_; ++r)
    if (r != rank_) drop_pending(peer(r), st);
  announce_abort();
  cv_.notify_all();
}

}  // namespace chorus::engine
