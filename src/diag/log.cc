// Log sink, prefixes and CHORUS_DEBUG* parsing.
#include "diag/log.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "util/strings.h"

namespace chorus::diag {

std::atomic<int> g_log_level{static_cast<int>(LogLevel::kWarn)};
std::atomic<unsigned> g_log_subsys{~0u};

namespace {

std::mutex g_mu;
FILE* g_sink = nullptr;  // nullptr = stderr (no file, or not opened yet)
std::string g_pattern;   // CHORUS_DEBUG_FILE; opened on the first write that can expand it
std::atomic<int> g_rank{-1};

const char* level_name(LogLevel l) {
  switch (l) {
    case LogLevel::kWarn: return "WARN";
    case LogLevel::kInfo: return "INFO";
    case LogLevel::kDebug: return "DEBUG";
    case LogLevel::kTrace: return "TRACE";
    default: return "";
  }
}

std::string hostname() {
  char buf[256] = {0};
  gethostname(buf, sizeof(buf) - 1);
  return buf;
}

std::string expand_pattern(const std::string& pattern) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size()) {
      char c = pattern[++i];
      if (c == 'h') out += hostname();
      else if (c == 'p') out += std::to_string(getpid());
      else if (c == 'r') out += std::to_string(g_rank.load());
      else out += c;
    } else {
      out += pattern[i];
    }
  }
  return out;
}

// The sink for a write now (REQUIRES g_mu): the CHORUS_DEBUG_FILE file, opened on first
// use once its pattern can be expanded (a %r needs the rank: until a communicator sets
// it, output goes to stderr), appending and never truncating (several processes may
// share one file); stderr when there is none or it cannot be opened.
FILE* sink_locked() {
  if (g_sink != nullptr || g_pattern.empty()) return g_sink != nullptr ? g_sink : stderr;
  if (g_pattern.find("%r") != std::string::npos && g_rank.load() < 0) return stderr;
  const std::string path = expand_pattern(g_pattern);
  g_pattern.clear();  // one attempt
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd >= 0) g_sink = ::fdopen(fd, "a");
  if (g_sink == nullptr) {
    if (fd >= 0) ::close(fd);
    std::fprintf(stderr, "CHORUS WARN cannot open CHORUS_DEBUG_FILE %s (errno %d); using stderr\n",
                 path.c_str(), errno);
    return stderr;
  }
  return g_sink;
}

}  // namespace

void log_configure(LogLevel level, unsigned subsys_mask, const std::string& file) {
  g_log_level = static_cast<int>(level);
  g_log_subsys = subsys_mask ? subsys_mask : config::kAllSubsys;

  std::lock_guard<std::mutex> lock(g_mu);
  if (!file.empty() && g_sink == nullptr) g_pattern = file;
}

void log_set_rank(int rank) { g_rank = rank; }

void log_adopt_rank(int rank) {
  int unset = -1;
  g_rank.compare_exchange_strong(unset, rank);
}

void log_write_report(const std::string& text) {
  std::lock_guard<std::mutex> lock(g_mu);
  FILE* out = sink_locked();
  std::fwrite(text.data(), 1, text.size(), out);
  std::fflush(out);
}

void log_write(LogLevel level, Subsys, const char* file, int line, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char body[2048];
  std::vsnprintf(body, sizeof(body), fmt, ap);
  va_end(ap);
  static const std::string host = hostname();
  const char* base = file;
  for (const char* p = file; *p; ++p)
    if (*p == '/') base = p + 1;
  std::string rank = g_rank >= 0 ? str_printf(" [rank %d]", g_rank.load()) : "";
  std::lock_guard<std::mutex> lock(g_mu);
  FILE* out = sink_locked();
  std::fprintf(out, "%s:%d:%ld%s CHORUS %s %s:%d %s\n", host.c_str(), getpid(),
               static_cast<long>(syscall(SYS_gettid)), rank.c_str(), level_name(level), base, line,
               body);
  std::fflush(out);
}

void check_failed(const char* file, int line, const char* cond, const char* msg) {
  std::fprintf(stderr, "CHORUS CHECK failed at %s:%d: %s %s\n", file, line, cond, msg);
  std::abort();
}

}  // namespace chorus::diag
