// Byte-size and duration parsing for the tools' command lines.
#include "cli_values.h"

#include <cctype>
#include <limits>

namespace chorus_tools {

namespace {

std::string upper(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

// Leading unsigned decimal number of `text`; `rest` gets what follows. False when there
// is no number, a sign, or it overflows.
bool leading_number(const std::string& text, unsigned long long* value, std::string* rest) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return false;
  std::size_t pos = 0;
  try {
    *value = std::stoull(text, &pos);
  } catch (const std::exception&) {
    return false;
  }
  *rest = text.substr(pos);
  return true;
}

}  // namespace

bool parse_bytes(const std::string& text, std::size_t* bytes) {
  unsigned long long value = 0;
  std::string suffix;
  if (!leading_number(text, &value, &suffix)) return false;
  suffix = upper(suffix);
  if (suffix.ends_with("IB")) suffix.resize(suffix.size() - 2);
  else if (suffix.size() == 2 && suffix.back() == 'B') suffix.pop_back();
  int shift = suffix.empty() || suffix == "B" ? 0 : suffix == "K" ? 10 : suffix == "M" ? 20
            : suffix == "G" ? 30 : -1;
  if (shift < 0 || value > (~0ULL >> shift)) return false;
  *bytes = static_cast<std::size_t>(value << shift);
  return true;
}

bool parse_duration(const std::string& text, std::chrono::milliseconds* out) {
  unsigned long long value = 0;
  std::string unit;
  if (!leading_number(text, &value, &unit)) return false;
  unsigned long long ms_per_unit = unit == "ms" ? 1 : unit == "" || unit == "s" ? 1000
                                 : unit == "m" ? 60'000 : unit == "h" ? 3'600'000 : 0;
  if (ms_per_unit == 0) return false;
  constexpr auto kMax = static_cast<unsigned long long>(std::numeric_limits<std::int64_t>::max());
  if (value > kMax / ms_per_unit) return false;
  *out = std::chrono::milliseconds(static_cast<std::int64_t>(value * ms_per_unit));
  return true;
}

CLI::Validator bytes_validator() {
  return CLI::Validator(
      [](std::string& s) {
        std::size_t b;
        return parse_bytes(s, &b) ? std::string() : "not a size like 8, 64K, 16M or 1G: " + s;
      },
      "SIZE");
}

CLI::Validator duration_validator() {
  return CLI::Validator(
      [](std::string& s) {
        std::chrono::milliseconds d;
        return parse_duration(s, &d) ? std::string()
                                     : "not a duration like 500ms, 30s, 5m or 24h: " + s;
      },
      "DURATION");
}

}  // namespace chorus_tools
