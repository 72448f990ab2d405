// A communicator's diagnostics plumbing: the diagnostic settings (CHORUS_FLIGHT_RECORDER_SIZE,
// CHORUS_FLIGHT_RECORDER_FORMAT, CHORUS_HANG_REPORT, CHORUS_SIGUSR1, CHORUS_TIMELINE, CHORUS_STATS), the bounded
// hang-report exchange through the store, and where reports go (CHORUS_DEBUG_FILE or stderr).
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bootstrap/store.h"
#include "diag/hang_report.h"

namespace chorus::core {

enum class HangReportMode { kNone, kRank0, kAll };

struct DiagSettings {
  std::size_t recorder_size = 64;
  HangReportMode hang_report = HangReportMode::kRank0;
  bool sigusr1 = true;
  bool json_dumps = false;  // CHORUS_FLIGHT_RECORDER_FORMAT=json: automatic dumps in JSON
  std::string timeline;     // CHORUS_TIMELINE file pattern ("" = off)
  bool stats = false;       // CHORUS_STATS=1: statistics, table printed at destruction
};

// From the process config (defaults when it cannot be loaded; an unknown
// CHORUS_HANG_REPORT value means rank0, with a warning).
DiagSettings diag_settings();

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
