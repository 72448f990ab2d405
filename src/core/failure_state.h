// FailureState: whether a communicator is still usable. The sticky failure (the first
// communication error wins, shared by every stream's worker), the abort flag, the
// once-only failure report, and after a first failure by timeout the ranks that stopped
// making progress (stalled.cc), which every later error names.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "diag/hang_report.h"
#include "util/status.h"

namespace chorus::core {

class FailureState {
 public:
  explicit FailureState(int rank) : rank_(rank) {}

  // Records `s` as the sticky failure unless one is recorded already. `ask_liveness`: a
  // liveness question will follow (a first failure by timeout whose hang-report exchange
  // runs): until settle_liveness() answers it, every error of the communicator waits.
  void record(const Status& s, bool ask_liveness);
  // abort() was called: returns true when it had been already.
  bool set_aborted() { return aborted_.exchange(true); }
  bool aborted() const { return aborted_.load(std::memory_order_acquire); }
  // The failure report (flight-recorder dump, hang line) is being made: returns true when
  // it had been already (a communicator reports once).
  bool set_reported() { return reported_.exchange(true); }

  // The sticky failure as recorded (OK when none).
  Status first_failure() const;
  // The same once the liveness question of a timeout is answered (waits for it, bounded).
  Status settled_failure() const;
  // The sticky failure, or kAborted after abort(), as the refusal of operation `what` of
  // seq `seq`; OK when the communicator is usable.
  Status refuse(const char* what, std::uint64_t seq) const;

  // --- After a timeout: which ranks stopped making progress (src/core/stalled.cc) ------
  // The rank a timeout names is the one this rank waited on, which may itself wait on the
  // stalled rank. The failure report publishes this rank's hang line and gathers the
  // others' through the store; the ranks that published nothing within the bound are the
  // stalled ones. settle_liveness() records them from the gathered `lines` (empty: not
  // known; `progress(r)`: the last seq rank r was known to complete, -1 = none) and
  // decorates the sticky failure; name_stalled() waits for that (bounded) and decorates
  // `s`: " (stalled: rank S (host h pid p) did not answer ...)", peer() = S.
  void settle_liveness(const std::vector<diag::RankLine>& lines,
                       const std::function<std::int64_t(int)>& progress);
  Status name_stalled(const Status& s) const;

 private:
  // `s` with the stalled-rank text appended, once (mu_ held).
  Status with_stalled_locked(const Status& s) const;
  // Waits until no liveness question is pending, at most its budget (mu_ held in `lk`).
  void wait_liveness_locked(std::unique_lock<std::mutex>& lk) const;

  const int rank_;
  mutable std::mutex mu_;
  Status failed_;  // sticky: first communication error (mu_)
  std::atomic<bool> has_failed_{false};  // failed_ is set (read without the lock)
  bool liveness_pending_ = false;  // the liveness question of a timeout runs (mu_)
  mutable std::condition_variable liveness_cv_;  // liveness_pending_ became false
  std::string stalled_text_;  // " (stalled: ...)" or "" (mu_)
  int stalled_rank_ = -1;     // the stalled rank errors name as peer() (mu_)
  std::atomic<bool> aborted_{false};   // abort() was called (any thread)
  std::atomic<bool> reported_{false};  // failure report / hang line made (once)
};

}  // namespace chorus::core
