// Diagnostic settings, the bounded hang-report exchange through the store, report output.
#include "core/comm_diag.h"

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "diag/log.h"
#include "util/strings.h"

namespace chorus::core {

namespace {

bootstrap::Bytes to_bytes(const std::string& s) { return bootstrap::Bytes(s.begin(), s.end()); }

// How long the rank a failure names is waited for (it is often dead or stalled).
constexpr int kCulpritGraceMs = 200;

std::string hang_key(int rank) { return str_printf("hang/%d", rank); }

// Runs on the helper thread: may block as long as the store lets it.
HangExchange publish_and_gather(bootstrap::Store& store, std::uint32_t comm,
                                const diag::RankLine& mine, std::vector<diag::RankLine> lines,
                                int culprit, bool gather, bool print, Deadline deadline) {
  Status st = store.set(hang_key(mine.rank), to_bytes(diag::encode_rank_line(mine)));
  if (!st.is_ok())
    CHORUS_LOG(WARN, Coll, "comm %u: publishing the hang report line failed: %s", comm,
               st.message().c_str());
  if (!gather && !print) return {};
  std::vector<std::string> keys;
  for (const auto& l : lines)
    if (l.rank != mine.rank && l.rank != culprit) keys.push_back(hang_key(l.rank));
  const bool all_there = store.wait(keys, deadline).is_ok();
  for (auto& l : lines) {
    if (l.rank == mine.rank) {
      l = mine;
      continue;
    }
    // The culprit gets a short grace (a desync culprit is alive and reports too).
    const int grace_ms = l.rank == culprit ? std::max(20, deadline.remaining_ms(kCulpritGraceMs))
                                           : kCulpritGraceMs;
    if (!all_there && l.rank != culprit) {
      Result<bool> present = store.check(hang_key(l.rank));
      if (!present || !*present) continue;
    }
    Result<bootstrap::Bytes> raw =
        store.get(hang_key(l.rank), Deadline::after(std::chrono::milliseconds(grace_ms)));
    if (!raw) continue;
    auto parsed = diag::decode_rank_line(std::string(raw->begin(), raw->end()));
    if (parsed && parsed->rank == l.rank) l = *parsed;
  }
  HangExchange out;
  if (print) out.text = diag::format_hang_report(comm, mine.rank, lines);
  out.lines = std::move(lines);
  return out;
}

}  // namespace

DiagSettings diag_settings(const CommConfig& cfg) {
  DiagSettings d;
  d.recorder_size = static_cast<std::size_t>(cfg.flight_recorder_size);
  d.hang_report = cfg.hang_report;
  d.json_dumps = cfg.flight_recorder_format == RecorderFormat::kJson;
  d.timeline = cfg.timeline;
  d.stats = cfg.print_stats;
  return d;
}

HangExchange exchange_hang_lines(std::shared_ptr<bootstrap::Store> store, std::uint32_t comm,
                                 const diag::RankLine& mine, std::vector<diag::RankLine> known,
                                 int culprit, bool gather, bool print,
                                 std::chrono::milliseconds budget) {
  struct Shared {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    HangExchange result;
  };
  auto shared = std::make_shared<Shared>();
  const Deadline deadline = Deadline::after(budget);
  // Detached: a hung store keeps only this thread (and its copies) waiting.
  std::thread([shared, store, comm, mine, known = std::move(known), culprit, gather, print,
               deadline]() mutable {
    HangExchange result = publish_and_gather(*store, comm, mine, std::move(known), culprit,
                                             gather, print, deadline);
    std::lock_guard<std::mutex> g(shared->mu);
    shared->result = std::move(result);
    shared->done = true;
    shared->cv.notify_all();
  }).detach();
  std::unique_lock<std::mutex> lk(shared->mu);
  // A little slack past the gather deadline for formatting and the last get().
  const bool done = shared->cv.wait_until(lk, deadline.at() + std::chrono::milliseconds(300),
                                          [&] { return shared->done; });
  if (done) return shared->result;
  HangExchange none;
  if (print)
    none.text = str_printf("chorus hang report v1 (comm %u): the store did not answer within "
                           "%lld ms; no cross-rank table\n",
                           comm, static_cast<long long>(budget.count()));
  return none;
}

void write_report(const std::string& text) { diag::log_write_report(text); }

}  // namespace chorus::core
