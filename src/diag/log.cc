// Log sink, prefixes and CHORUS_DEBUG* parsing.
#include "diag/log.h"

#include <sys/syscall.h>
#include <unistd.h>

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
FILE* g_sink = nullptr;  // nullptr = stderr
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

}  // namespace

void log_configure(const std::string& level, const std::string& subsys, const std::string& file) {
  std::string l;
  for (char c : level) l += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (l == "NONE") g_log_level = 0;
  else if (l == "WARN" || l.empty()) g_log_level = 1;
  else if (l == "INFO") g_log_level = 2;
  else if (l == "DEBUG") g_log_level = 3;
  else if (l == "TRACE") g_log_level = 4;

  unsigned mask = 0;
  for (const auto& raw : str_split(subsys, ',')) {
    std::string s(str_trim(raw));
    for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (s == "ALL" || s.empty()) mask = ~0u;
    else if (s == "INIT") mask |= 1;
    else if (s == "BOOT") mask |= 2;
    else if (s == "NET") mask |= 4;
    else if (s == "ALGO") mask |= 8;
    else if (s == "COLL") mask |= 16;
    else if (s == "ENV") mask |= 32;
  }
  g_log_subsys = mask ? mask : ~0u;

  std::lock_guard<std::mutex> lock(g_mu);
  if (!file.empty() && g_sink == nullptr) g_sink = std::fopen(expand_pattern(file).c_str(), "a");
}

void log_set_rank(int rank) { g_rank = rank; }

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
  std::fprintf(g_sink ? g_sink : stderr, "%s:%d:%ld%s CHORUS %s %s:%d %s\n", host.c_str(), getpid(),
               static_cast<long>(syscall(SYS_gettid)), rank.c_str(), level_name(level), base, line,
               body);
  std::fflush(g_sink ? g_sink : stderr);
}

void check_failed(const char* file, int line, const char* cond, const char* msg) {
  std::fprintf(stderr, "CHORUS CHECK failed at %s:%d: %s %s\n", file, line, cond, msg);
  std::abort();
}

}  // namespace chorus::diag
