// Timeline file: Chrome trace-event JSON, one span per operation (and one child span per
// level of a hierarchical algorithm).
#include "diag/timeline.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <string_view>
#include <type_traits>

#include "diag/flight_recorder.h"
#include "diag/log.h"
#include "util/strings.h"

namespace chorus::diag {

namespace {

constexpr std::size_t kFlushBytes = 1 << 20;

// JSON string body: quotes, backslashes and control characters escaped.
std::string esc(const char* s) {
  std::string out;
  for (const char* p = s; *p; ++p) {
    const auto c = static_cast<unsigned char>(*p);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      out += str_printf("\\u%04x", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace

std::string expand_file_pattern(const std::string& pattern, int rank) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size()) {
      const char c = pattern[++i];
      if (c == 'h') out += this_host();
      else if (c == 'p') out += std::to_string(::getpid());
      else if (c == 'r') out += std::to_string(rank);
      else out += c;
    } else {
      out += pattern[i];
    }
  }
  return out;
}

Timeline& Timeline::process() {
  static Timeline t;
  return t;
}

Timeline::~Timeline() {
  std::lock_guard<std::mutex> g(mu_);
  close_locked();
}

bool Timeline::is_open() const {
  std::lock_guard<std::mutex> g(mu_);
  return file_ != nullptr;
}

bool Timeline::acquire(const std::string& pattern, int rank, int size,
                       const ClockAlignment& clock) {
  std::lock_guard<std::mutex> g(mu_);
  if (file_ != nullptr) {
    ++users_;
    return true;
  }
  const std::string path = expand_file_pattern(pattern, rank);
  file_ = std::fopen(path.c_str(), "we");
  if (file_ == nullptr) {
    CHORUS_LOG(WARN, Coll, "cannot open CHORUS_TIMELINE file %s (errno %d); no timeline",
               path.c_str(), errno);
    return false;
  }
  users_ = 1;
  pid_ = rank;
  offset_ns_ = clock.offset_ns;
  first_event_ = true;
  tracks_.clear();
  buf_ = str_printf(
      "{\"otherData\":{\"chorus_timeline\":%d,\"rank\":%d,\"size\":%d,\"host\":\"%s\","
      "\"pid\":%d,\"clock\":{\"reference_rank\":%d,\"offset_us\":%.3f,\"error_us\":%.3f,"
      "\"samples\":%d,\"method\":\"%s\",\"source\":\"CLOCK_MONOTONIC\"}},\n"
      "\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n",
      kTimelineVersion, rank, size, esc(this_host().c_str()).c_str(), static_cast<int>(::getpid()),
      clock.reference_rank, static_cast<double>(clock.offset_ns) / 1e3,
      static_cast<double>(clock.error_ns) / 1e3, clock.samples, clock.method);
  buf_ += str_printf(
      "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"args\":{\"name\":\"rank %d (%s pid %d)\"}}",
      rank, rank, esc(this_host().c_str()).c_str(), static_cast<int>(::getpid()));
  buf_ += str_printf(",\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%d,\"args\":{\"sort_index\":%d}}",
                     rank, rank);
  first_event_ = false;
  return true;
}

void Timeline::release() {
  std::lock_guard<std::mutex> g(mu_);
  if (users_ > 0 && --users_ == 0) close_locked();
}

void Timeline::add_comm(std::uint32_t comm_id, const std::string& key, int rank, int size) {
  std::lock_guard<std::mutex> g(mu_);
  if (file_ == nullptr) return;
  buf_ += str_printf(",\n{\"ph\":\"M\",\"name\":\"chorus_comm\",\"pid\":%d,\"args\":{\"comm\":%u,"
                     "\"key\":\"%s\",\"rank\":%d,\"size\":%d}}",
                     pid_, comm_id, esc(key.c_str()).c_str(), rank, size);
}

long Timeline::track_locked(const OpEvent& e, const std::string** stream) {
  const long tid = static_cast<long>(e.comm_id) * 1000 + e.stream + 1;
  auto [it, added] = tracks_.try_emplace(tid);
  if (added) {
    it->second = esc(e.stream_name);
    buf_ += str_printf(",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%ld,"
                       "\"args\":{\"name\":\"comm %u stream %s\"}}",
                       pid_, tid, e.comm_id, it->second.c_str());
    buf_ += str_printf(",\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%d,\"tid\":%ld,"
                       "\"args\":{\"sort_index\":%ld}}", pid_, tid, tid);
  }
  *stream = &it->second;
  return tid;
}

namespace {

// Appends JSON text to a buffer with std::to_chars: a span is written per operation, and
// printf's parsing and %f cost several times more (Google Benchmark BM_TimelineSpan).
class Out {
 public:
  explicit Out(std::string& s) : s_(s) {}
  Out& operator<<(std::string_view v) {
    s_.append(v);
    return *this;
  }
  Out& operator<<(const char* v) { return *this << std::string_view(v); }
  template <class T>
    requires std::is_integral_v<T>
  Out& operator<<(T v) {
    char b[24];
    const auto r = std::to_chars(b, b + sizeof b, v);
    s_.append(b, static_cast<std::size_t>(r.ptr - b));
    return *this;
  }
  // Nanoseconds as microseconds with three decimals.
  struct Us {
    std::int64_t ns;
  };
  Out& operator<<(Us u) {
    std::int64_t ns = u.ns;
    if (ns < 0) {
      s_ += '-';
      ns = -ns;
    }
    *this << ns / 1000;
    const int f = static_cast<int>(ns % 1000);
    const char frac[4] = {'.', static_cast<char>('0' + f / 100),
                          static_cast<char>('0' + f / 10 % 10), static_cast<char>('0' + f % 10)};
    s_.append(frac, 4);
    return *this;
  }

 private:
  std::string& s_;
};

}  // namespace

// No allocation per span: the names are static text and the stream's escaped name is
// cached per track.
void Timeline::span(const OpEvent& e) {
  std::lock_guard<std::mutex> g(mu_);
  if (file_ == nullptr) return;
  const std::string* stream = nullptr;
  const long tid = track_locked(e, &stream);
  using Us = Out::Us;
  Out(buf_) << ",\n{\"ph\":\"X\",\"cat\":\"chorus\",\"name\":\"" << e.name << "\",\"pid\":" << pid_
            << ",\"tid\":" << tid << ",\"ts\":" << Us{e.start_ns + offset_ns_}
            << ",\"dur\":" << Us{e.end_ns - e.start_ns} << ",\"args\":{\"comm\":" << e.comm_id
            << ",\"rank\":" << e.rank << ",\"size\":" << e.size << ",\"seq\":" << e.seq
            << ",\"dtype\":\"" << e.dtype << "\",\"redop\":\"" << e.redop
            << "\",\"count\":" << e.count << ",\"bytes\":" << e.bytes << ",\"algo\":\"" << e.algo
            << "\",\"root\":" << e.root
            << ",\"peer\":" << e.peer << ",\"stream\":\"" << *stream << "\",\"queued_us\":"
            << Us{e.issue_ns > 0 ? e.start_ns - e.issue_ns : 0}
            << ",\"ok\":" << (e.ok ? "true" : "false") << "}}";
  levels_locked(e, tid);
  if (buf_.size() >= kFlushBytes) flush_locked();
}

void Timeline::levels_locked(const OpEvent& e, long tid) {
  // Level and algorithm names are short static text: no escaping.
  Out o(buf_);
  for (int i = 0; i < e.num_levels; ++i) {
    const OpLevel& l = e.levels[i];
    // Inside the op's span by construction; clamped so that a viewer nests them.
    const std::int64_t a = std::max(l.start_ns, e.start_ns);
    const std::int64_t b = std::max(a, std::min(l.end_ns, e.end_ns));
    o << ",\n{\"ph\":\"X\",\"cat\":\"chorus.level\",\"name\":\"" << l.name << "\",\"pid\":" << pid_
      << ",\"tid\":" << tid << ",\"ts\":" << Out::Us{a + offset_ns_}
      << ",\"dur\":" << Out::Us{b - a}
      << ",\"args\":{\"level\":" << l.level << ",\"via\":\"" << l.via << "\",\"op\":\"" << e.name
      << "\",\"comm\":" << e.comm_id << ",\"seq\":" << e.seq << "}}";
  }
}

void Timeline::flush_locked() {
  if (file_ == nullptr || buf_.empty()) return;
  std::fwrite(buf_.data(), 1, buf_.size(), file_);
  std::fflush(file_);
  buf_.clear();
}

void Timeline::close_locked() {
  if (file_ == nullptr) return;
  buf_ += "\n]}\n";
  flush_locked();
  std::fclose(file_);
  file_ = nullptr;
  users_ = 0;
}

}  // namespace chorus::diag
