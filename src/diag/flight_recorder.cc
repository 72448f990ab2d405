// FlightRecorder: the ring of recent operations and its versioned text dump.
#include "diag/flight_recorder.h"

#include <unistd.h>

#include <time.h>

#include <algorithm>
#include <ctime>

#include "util/strings.h"

namespace chorus::diag {

namespace {

const char* or_dash(const char* s) { return (s != nullptr && *s != '\0') ? s : "-"; }

// One line, double quotes and control characters replaced, so the field stays last
// and parseable.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) out += (c == '"') ? '\'' : (static_cast<unsigned char>(c) < 0x20 ? ' ' : c);
  return out + "\"";
}

std::string entry_line(const FlightEntry& e, std::int64_t now) {
  std::string line = str_printf(
      "  seq=%llu op=%s dtype=%s count=%zu redop=%s root=%s peer=%s bytes=%zu algo=%s "
      "state=%s issued=%s wait_us=%lld run_us=%lld stream=%s",
      static_cast<unsigned long long>(e.op.seq), or_dash(e.op.name), or_dash(e.op.dtype),
      e.op.count, or_dash(e.op.redop), e.op.root >= 0 ? std::to_string(e.op.root).c_str() : "-",
      e.op.peer >= 0 ? std::to_string(e.op.peer).c_str() : "-", e.op.bytes, or_dash(e.algo),
      to_string(e.state), iso_time(e.issue_wall_ns).c_str(),
      static_cast<long long>(wait_us(e, now)), static_cast<long long>(run_us(e, now)),
      or_dash(e.op.stream));
  if (e.state == OpState::kFailed) line += " error=" + quoted(e.error);
  return line + "\n";
}

}  // namespace

std::int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::int64_t tick_now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

std::int64_t wall_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string iso_time(std::int64_t ns) {
  const std::time_t secs = static_cast<std::time_t>(ns / 1000000000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[40];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  return str_printf("%s.%06lldZ", buf, static_cast<long long>((ns % 1000000000) / 1000));
}

std::int64_t wait_us(const FlightEntry& e, std::int64_t now) {
  return std::max<std::int64_t>(0, ((e.start_ns != 0 ? e.start_ns : now) - e.issue_ns) / 1000);
}

std::int64_t run_us(const FlightEntry& e, std::int64_t now) {
  if (e.start_ns == 0) return 0;
  return std::max<std::int64_t>(0, ((e.end_ns != 0 ? e.end_ns : now) - e.start_ns) / 1000);
}

const char* to_string(OpState s) {
  switch (s) {
    case OpState::kIssued: return "issued";
    case OpState::kStarted: return "started";
    case OpState::kDone: return "done";
    case OpState::kFailed: return "failed";
  }
  return "?";
}

std::string this_host() {
  char buf[256] = {0};
  ::gethostname(buf, sizeof(buf) - 1);
  return buf;
}

FlightRecorder::FlightRecorder(std::size_t capacity, std::uint32_t comm, int rank, int size)
    : comm_(comm), rank_(rank), size_(size), ring_(capacity),
      wall_minus_steady_(wall_now_ns() - tick_now_ns()) {}

FlightEntry* FlightRecorder::slot(std::uint64_t id) {
  if (ring_.empty() || id == 0) return nullptr;
  FlightEntry& e = ring_[(id - 1) % ring_.size()];
  return e.id == id ? &e : nullptr;
}

std::uint64_t FlightRecorder::issue(const OpIdentity& op, std::int64_t now,
                                    const char* started_algo) {
  const OpState state = started_algo != nullptr ? OpState::kStarted : OpState::kIssued;
  const std::int64_t wall = now + wall_minus_steady_;
  std::lock_guard<util::SpinLock> g(mu_);
  const std::uint64_t id = next_id_++;
  if (!ring_.empty()) {
    FlightEntry& e = ring_[(id - 1) % ring_.size()];
    e.id = id;
    e.op = op;
    e.algo = started_algo != nullptr ? started_algo : "";
    e.state = state;
    e.issue_ns = now;
    e.start_ns = started_algo != nullptr ? now : 0;
    e.end_ns = 0;
    e.issue_wall_ns = wall;
    e.error.clear();  // keeps its capacity: no allocation when reused
  }
  cur_id_ = id;
  summary_.cur_seq = static_cast<std::int64_t>(op.seq);
  summary_.cur_name = op.name;
  summary_.cur_peer = op.peer;
  summary_.cur_state = state;
  return id;
}

void FlightRecorder::start(std::uint64_t id, const char* algo, std::int64_t now) {
  std::lock_guard<util::SpinLock> g(mu_);
  if (FlightEntry* e = slot(id)) {
    e->algo = algo;
    e->state = OpState::kStarted;
    e->start_ns = now;
  }
  if (id == cur_id_) summary_.cur_state = OpState::kStarted;
}

void FlightRecorder::done(std::uint64_t id) { end(id, OpState::kDone, nullptr); }

void FlightRecorder::failed(std::uint64_t id, const std::string& error) {
  end(id, OpState::kFailed, &error);
}

void FlightRecorder::end(std::uint64_t id, OpState state, const std::string* error) {
  const std::int64_t now = tick_now_ns();
  std::lock_guard<util::SpinLock> g(mu_);
  FlightEntry* e = slot(id);
  if (e != nullptr) {
    e->state = state;
    e->end_ns = now;
    if (e->start_ns == 0) e->start_ns = now;
    if (error != nullptr) e->error = *error;
  }
  if (id != cur_id_) return;
  if (state == OpState::kDone) {
    summary_.done_seq = summary_.cur_seq;
    summary_.done_name = summary_.cur_name;
    summary_.done_peer = summary_.cur_peer;
    summary_.cur_seq = -1;
    summary_.cur_name = "";
    summary_.cur_peer = -1;
  }
  summary_.cur_state = state;
}

std::vector<FlightEntry> FlightRecorder::snapshot() const {
  std::lock_guard<util::SpinLock> g(mu_);
  std::vector<FlightEntry> out;
  if (ring_.empty()) return out;
  const std::uint64_t n = next_id_ - 1;
  const std::uint64_t first = n > ring_.size() ? n - ring_.size() + 1 : 1;
  for (std::uint64_t id = first; id <= n; ++id) out.push_back(ring_[(id - 1) % ring_.size()]);
  return out;
}

std::uint64_t FlightRecorder::recorded() const {
  std::lock_guard<util::SpinLock> g(mu_);
  return next_id_ - 1;
}

FlightSummary FlightRecorder::summary() const {
  std::lock_guard<util::SpinLock> g(mu_);
  return summary_;
}

std::string FlightRecorder::dump(const char* reason) const {
  const std::vector<FlightEntry> entries = snapshot();
  const std::uint64_t recorded = this->recorded();
  static const std::string host = this_host();
  std::string out = str_printf(
      "chorus flight recorder v%d: comm=%u rank=%d size=%d host=%s pid=%d reason=%s "
      "time=%s recorded=%llu capacity=%zu entries=%zu\n",
      kFlightRecordVersion, comm_, rank_, size_, host.c_str(), static_cast<int>(::getpid()),
      reason, iso_time(wall_now_ns()).c_str(), static_cast<unsigned long long>(recorded),
      ring_.size(), entries.size());
  const std::int64_t now = tick_now_ns();
  for (const FlightEntry& e : entries) out += entry_line(e, now);
  out += str_printf("chorus flight recorder end: comm=%u rank=%d\n", comm_, rank_);
  return out;
}

}  // namespace chorus::diag
