// FailureState after a timeout: which ranks stopped making progress, the ranks that did
// not answer the liveness question (their hang-report line) through the store. Every
// error of the communicator names them, whichever peer its own wait happened to be on.
#include <algorithm>

#include "core/comm_diag.h"
#include "core/failure_state.h"
#include "util/strings.h"

namespace chorus::core {

namespace {

// Slack past the exchange's own bound (it returns after at most budget + 300 ms).
constexpr std::chrono::milliseconds kLivenessSlack{700};

std::string who(const diag::RankLine& l) {
  std::string s = str_printf("rank %d", l.rank);
  if (l.pid >= 0) s += str_printf(" (host %s pid %ld)", l.host.empty() ? "?" : l.host.c_str(), l.pid);
  return s;
}

}  // namespace

void FailureState::settle_liveness(const std::vector<diag::RankLine>& lines,
                                   const std::function<std::int64_t(int)>& progress) {
  std::vector<int> answered;
  std::vector<const diag::RankLine*> silent;
  for (const diag::RankLine& l : lines) {
    if (l.rank == rank_ || l.reported) answered.push_back(l.rank);
    else silent.push_back(&l);
  }
  std::string text;
  int culprit = -1;
  if (!lines.empty() && !silent.empty()) {
    const int named = first_failure().peer();
    // The rank the error named when it is silent too; else the one known least advanced.
    for (const diag::RankLine* l : silent)
      if (l->rank == named) culprit = named;
    if (culprit < 0) {
      std::int64_t least = 0;
      for (const diag::RankLine* l : silent) {
        const std::int64_t p = progress(l->rank);
        if (culprit < 0 || p < least) {
          culprit = l->rank;
          least = p;
        }
      }
    }
    std::string names;
    for (std::size_t i = 0; i < silent.size(); ++i)
      names += (i == 0 ? "" : i + 1 == silent.size() ? " and " : ", ") + who(*silent[i]);
    std::sort(answered.begin(), answered.end());
    text = str_printf(" (stalled: %s did not answer the liveness check through the store within "
                      "%lld ms, while %s %s did",
                      names.c_str(), static_cast<long long>(kHangReportBudget.count()),
                      answered.size() == 1 ? "rank" : "ranks",
                      diag::rank_ranges(answered).c_str());
    if (silent.size() == 1) {
      const std::int64_t done = progress(culprit);
      text += done < 0 ? "; no operation it completed is known"
                       : str_printf("; the last operation it was known to have completed was seq %lld",
                                    static_cast<long long>(done));
    }
    text += ")";
  }
  std::lock_guard<std::mutex> g(mu_);
  stalled_text_ = text;
  stalled_rank_ = culprit;
  if (!text.empty() && failed_.code() == ErrorCode::kTimeout) failed_ = with_stalled_locked(failed_);
  liveness_pending_ = false;
  liveness_cv_.notify_all();
}

Status FailureState::with_stalled_locked(const Status& s) const {
  if (stalled_text_.empty() || s.message().find(" (stalled: ") != std::string::npos) return s;
  return Status(s.code(), s.message() + stalled_text_, stalled_rank_, s.seq());
}

void FailureState::wait_liveness_locked(std::unique_lock<std::mutex>& lk) const {
  liveness_cv_.wait_for(lk, kHangReportBudget + kLivenessSlack,
                        [&] { return !liveness_pending_; });
}

Status FailureState::name_stalled(const Status& s) const {
  std::unique_lock<std::mutex> lk(mu_);
  wait_liveness_locked(lk);
  return with_stalled_locked(s);
}

Status FailureState::settled_failure() const {
  std::unique_lock<std::mutex> lk(mu_);
  if (liveness_pending_) wait_liveness_locked(lk);
  return failed_;
}

}  // namespace chorus::core
