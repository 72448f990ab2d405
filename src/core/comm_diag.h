// A communicator's diagnostics plumbing: the diagnostic settings (flight_recorder_size,
// flight_recorder_format, hang_report, timeline, stats of its CommConfig), the bounded
// hang-report exchange through the store, and where reports go (CHORUS_DEBUG_FILE or stderr).
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bootstrap/store.h"
#include "core/comm_config.h"
#include "diag/hang_report.h"

namespace chorus::core {

using HangReportMode = HangReport;

// A communicator's diagnostic settings, taken from its CommConfig (already checked).
struct DiagSettings {
  std::size_t recorder_size = 0;
  HangReportMode hang_report = HangReportMode::kNone;
  bool json_dumps = false;  // flight_recorder_format json: automatic dumps in JSON
  std::string timeline;     // timeline file pattern ("" = off)
  bool stats = false;       // CHORUS_STATS=1: statistics, table printed at destruction
};

DiagSettings diag_settings(const CommConfig& cfg);

// The bound on publishing and gathering hang-report lines: the store may be gone.
inline constexpr std::chrono::milliseconds kHangReportBudget{1000};
// The bound on gathering the CHORUS_STATS=1 tables at destruction.
inline constexpr std::chrono::milliseconds kStatsBudget{5000};

// What exchange_hang_lines() gathered.
struct HangExchange {
  std::string text;                   // the formatted report ("" unless print)
  std::vector<diag::RankLine> lines;  // every rank's line, indexed by rank; a rank that
                                      // published nothing has reported == false (empty
                                      // unless gather or print, or when the store hung)
};

// Publishes `mine` under "hang/<rank>" of `store` and, when `gather` or `print`, gathers
// every rank's line (ranks that never publish keep the host/pid of `known`); when `print`,
// also formats the report. Waits up to `budget` for every rank except `culprit` (the
// rank the failure names, -1 = none: it is likely dead or stalled, so it gets only a
// 200 ms grace). Runs on a helper thread and returns after at most `budget` + 300 ms even
// when the store hangs (then with no lines, and a note that it did not answer as text).
HangExchange exchange_hang_lines(std::shared_ptr<bootstrap::Store> store, std::uint32_t comm,
                                 const diag::RankLine& mine, std::vector<diag::RankLine> known,
                                 int culprit, bool gather, bool print,
                                 std::chrono::milliseconds budget);

// Writes a dump or report to CHORUS_DEBUG_FILE (per rank with %r) or else stderr.
void write_report(const std::string& text);

}  // namespace chorus::core
