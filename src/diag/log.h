// Logging: CHORUS_LOG(level, subsystem, fmt, ...) to stderr or CHORUS_DEBUG_FILE.
// Level and subsystem are checked before the arguments are evaluated. Never stdout.
#pragma once
#include <atomic>
#include <string>

#include "config/values.h"

namespace chorus::diag {

// The levels and subsystems are the parameter table's (CHORUS_DEBUG, CHORUS_DEBUG_SUBSYS).
using LogLevel = config::LogLevel;
// Spellings used by CHORUS_LOG(WARN, ...): the macro pastes the level name here.
namespace log_levels {
inline constexpr LogLevel NONE = LogLevel::kNone;
inline constexpr LogLevel WARN = LogLevel::kWarn;
inline constexpr LogLevel INFO = LogLevel::kInfo;
inline constexpr LogLevel DEBUG = LogLevel::kDebug;
inline constexpr LogLevel TRACE = LogLevel::kTrace;
}  // namespace log_levels
using Subsys = config::LogSubsys;

// Sets the level, the subsystems (a mask of Subsys bits) and the sink's file pattern
// ("" = stderr; a sink already open stays). Pushed in by core at the first init; safe to
// call more than once.
void log_configure(LogLevel level, unsigned subsys_mask, const std::string& file);
// Sets the "[rank r]" part of the prefix and of the %r in CHORUS_DEBUG_FILE (-1 = none).
void log_set_rank(int rank);
// log_set_rank(rank) unless a rank is set already (the first communicator's rank wins).
void log_adopt_rank(int rank);
// Writes a report (flight-recorder dump, hang report; text ending in '\n') whole to the
// CHORUS_DEBUG_FILE sink when one is configured, else to stderr. Never stdout.
void log_write_report(const std::string& text);

extern std::atomic<int> g_log_level;
extern std::atomic<unsigned> g_log_subsys;

inline bool log_enabled(LogLevel level, Subsys s) {
  return static_cast<int>(level) <= g_log_level.load(std::memory_order_relaxed) &&
         (g_log_subsys.load(std::memory_order_relaxed) & static_cast<unsigned>(s)) != 0;
}

void log_write(LogLevel level, Subsys s, const char* file, int line, const char* fmt, ...)
    __attribute__((format(printf, 5, 6)));

}  // namespace chorus::diag

#define CHORUS_LOG(level, subsys, ...)                                                   \
  do {                                                                                   \
    if (::chorus::diag::log_enabled(::chorus::diag::log_levels::level,                  \
                                    ::chorus::diag::Subsys::k##subsys))                  \
      ::chorus::diag::log_write(::chorus::diag::log_levels::level,                      \
                                ::chorus::diag::Subsys::k##subsys, __FILE__, __LINE__,   \
                                __VA_ARGS__);                                            \
  } while (0)

// Broken internal invariant: log file:line and abort (never thrown, never caught).
#define CHORUS_CHECK(cond, ...)                                                          \
  do {                                                                                   \
    if (!(cond)) ::chorus::diag::check_failed(__FILE__, __LINE__, #cond, "" __VA_ARGS__); \
  } while (0)

namespace chorus::diag {
[[noreturn]] void check_failed(const char* file, int line, const char* cond, const char* msg);
}
