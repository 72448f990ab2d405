// FailureState: the sticky failure and the refusals it causes (the liveness part of a
// timeout is in stalled.cc).
#include "core/failure_state.h"

#include "util/strings.h"

namespace chorus::core {

void FailureState::record(const Status& s, bool ask_liveness) {
  std::lock_guard<std::mutex> g(mu_);
  if (!failed_.is_ok()) return;
  failed_ = s;
  has_failed_.store(true, std::memory_order_release);
  liveness_pending_ = ask_liveness;
}

Status FailureState::first_failure() const {
  if (!has_failed_.load(std::memory_order_acquire)) return Status::ok();
  std::lock_guard<std::mutex> g(mu_);
  return failed_;
}

Status FailureState::refuse(const char* what, std::uint64_t seq) const {
  const auto s = static_cast<unsigned long long>(seq);
  if (has_failed_.load(std::memory_order_acquire))
    return settled_failure().with_context(
        str_printf("rank %d: %s seq %llu refused: the communicator failed earlier", rank_, what, s));
  if (aborted_.load(std::memory_order_acquire))
    return Status(ErrorCode::kAborted,
                  str_printf("rank %d: %s seq %llu refused: abort() was called on rank %d",
                             rank_, what, s, rank_),
                  -1, static_cast<std::int64_t>(seq));
  return Status::ok();
}

}  // namespace chorus::core
