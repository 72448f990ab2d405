// The table's defaults as compile-time constants (config::defaults::chunk_bytes, ...),
// for the rooms' own option structs (e.g. tcp::TcpOptions), so that a default stays
// written once, in params.def. Numbers, sizes and bools only.
#pragma once
#include <cstdint>

namespace chorus::config {

// "64K" -> 65536, "300" -> 300, "" -> 0 (an unset int); K, M, G are powers of 1024.
// Only the table's own literals are parsed: a malformed one fails to compile.
consteval std::uint64_t default_number(const char* text) {
  std::uint64_t v = 0;
  const char* p = text;
  for (; *p >= '0' && *p <= '9'; ++p) v = v * 10 + static_cast<std::uint64_t>(*p - '0');
  if (*p == 'K') v <<= 10, ++p;
  else if (*p == 'M') v <<= 20, ++p;
  else if (*p == 'G') v <<= 30, ++p;
  if (*p != '\0') throw "malformed default in params.def";
  return v;
}

namespace defaults {
#define CHORUS_PARAM(field, NAME, type, scope, def, unit, doc) CHORUS_DEFAULT_##type(field, def)
#define CHORUS_DEFAULT_kInt(field, def) \
  inline constexpr std::int64_t field = static_cast<std::int64_t>(default_number(def));
#define CHORUS_DEFAULT_kBytes(field, def) inline constexpr std::uint64_t field = default_number(def);
#define CHORUS_DEFAULT_kBool(field, def) inline constexpr bool field = default_number(def) != 0;
#define CHORUS_DEFAULT_kSeconds(field, def)
#define CHORUS_DEFAULT_kString(field, def)
#define CHORUS_DEFAULT_kTransport(field, def)
#define CHORUS_DEFAULT_kHangReport(field, def)
#define CHORUS_DEFAULT_kRecorderFormat(field, def)
#define CHORUS_DEFAULT_kLogLevel(field, def)
#define CHORUS_DEFAULT_kLogSubsys(field, def)
#define CHORUS_DEFAULT_kKernelIsa(field, def)
#include "config/params.def"
#undef CHORUS_DEFAULT_kKernelIsa
#undef CHORUS_DEFAULT_kLogSubsys
#undef CHORUS_DEFAULT_kLogLevel
#undef CHORUS_DEFAULT_kRecorderFormat
#undef CHORUS_DEFAULT_kHangReport
#undef CHORUS_DEFAULT_kTransport
#undef CHORUS_DEFAULT_kString
#undef CHORUS_DEFAULT_kSeconds
#undef CHORUS_DEFAULT_kBool
#undef CHORUS_DEFAULT_kBytes
#undef CHORUS_DEFAULT_kInt
#undef CHORUS_PARAM
}  // namespace defaults

}  // namespace chorus::config
