// CommImpl's failure report: what a failing (or departing) rank tells the others through
// the store (its hang-report line) and the answer it settles in the FailureState; and
// flight-recorder entries for point-to-point ops.
#include <unistd.h>

#include "core/comm_impl.h"
#include "util/strings.h"

namespace chorus::core {

namespace {

std::string op_text(const char* name, int peer) {
  if (peer < 0) return name;
  return str_printf("%s %s %d", name, std::string(name) == "send" ? "to" : "from", peer);
}

}  // namespace

std::uint64_t CommImpl::record_p2p(const char* name, std::uint64_t seq, int peer,
                                   std::size_t bytes, const char* stream) {
  diag::OpIdentity id;
  id.seq = seq;
  id.name = name;
  id.dtype = "uint8";
  id.count = bytes;
  id.peer = peer;
  id.bytes = bytes;
  id.stream = stream;
  return recorder_->issue(id);
}

diag::RankLine CommImpl::own_line(const char* state, const std::string& detail) const {
  const diag::FlightSummary s = recorder_->summary();
  diag::RankLine l;
  l.rank = rank_;
  l.reported = true;
  l.host = diag::this_host();
  l.pid = static_cast<long>(::getpid());
  l.done_seq = s.done_seq;
  l.done_op = op_text(s.done_name, s.done_peer);
  l.cur_seq = s.cur_seq;
  l.cur_op = op_text(s.cur_name, s.cur_peer);
  l.state = state;
  l.detail = detail;
  return l;
}

std::string CommImpl::lost_rank_text(int peer) const {
  std::string who = str_printf("rank %d", peer);
  if (pids_[peer] >= 0) who += str_printf(" (host %s pid %ld)", hosts_[peer].c_str(), pids_[peer]);
  const std::int64_t done = transport_->peer_progress(peer);
  if (done < 0) return who + " was lost; no operation it completed is known";
  return who + str_printf(" was lost; the last operation it was known to have completed was seq %lld",
                          static_cast<long long>(done));
}

std::vector<diag::RankLine> CommImpl::known_ranks() const {
  std::vector<diag::RankLine> out(static_cast<std::size_t>(size_));
  for (int r = 0; r < size_; ++r) {
    out[r].rank = r;
    if (r < static_cast<int>(hosts_.size())) {
      out[r].host = hosts_[r];
      out[r].pid = pids_[r];
    }
  }
  return out;
}

void CommImpl::report_failure() {
  if (failure_.set_reported()) return;
  const auto progress = [this](int peer) { return transport_->peer_progress(peer); };
  write_report(flight_record_auto("failure"));
  if (diag_.hang_report == HangReportMode::kNone || !comm_store_) {
    failure_.settle_liveness({}, progress);
    return;
  }
  const bool print = diag_.hang_report == HangReportMode::kAll || rank_ == 0;
  const Status failure = failure_.first_failure();
  // After a timeout every rank gathers the lines: who did not answer stopped progressing.
  const bool liveness = failure.code() == ErrorCode::kTimeout;
  HangExchange ex =
      exchange_hang_lines(comm_store_, comm_id_, own_line("failed", to_string(failure.code())),
                          known_ranks(), failure.peer(), liveness || print, print,
                          kHangReportBudget);
  failure_.settle_liveness(liveness ? ex.lines : std::vector<diag::RankLine>{}, progress);
  if (!ex.text.empty()) write_report(ex.text);
}

}  // namespace chorus::core
