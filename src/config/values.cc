// Spellings of the table's closed sets, and their parsers.
#include "config/values.h"

#include <cctype>

#include "util/strings.h"

namespace chorus::config {

namespace {

constexpr Spelling<Transport> kTransports[] = {
    {"auto", Transport::kAuto}, {"shm", Transport::kShm}, {"tcp", Transport::kTcp}};
constexpr Spelling<HangReport> kHangReports[] = {
    {"rank0", HangReport::kRank0}, {"all", HangReport::kAll}, {"none", HangReport::kNone}};
constexpr Spelling<RecorderFormat> kRecorderFormats[] = {{"text", RecorderFormat::kText},
                                                         {"json", RecorderFormat::kJson}};
constexpr Spelling<LogLevel> kLogLevels[] = {{"NONE", LogLevel::kNone},
                                             {"WARN", LogLevel::kWarn},
                                             {"INFO", LogLevel::kInfo},
                                             {"DEBUG", LogLevel::kDebug},
                                             {"TRACE", LogLevel::kTrace}};
constexpr Spelling<LogSubsys> kLogSubsystems[] = {
    {"INIT", LogSubsys::kInit}, {"BOOT", LogSubsys::kBoot}, {"NET", LogSubsys::kNet},
    {"ALGO", LogSubsys::kAlgo}, {"COLL", LogSubsys::kColl}, {"ENV", LogSubsys::kEnv}};
constexpr Spelling<KernelIsa> kKernelIsas[] = {{"auto", KernelIsa::kAuto},
                                               {"avx512", KernelIsa::kAvx512},
                                               {"avx2", KernelIsa::kAvx2},
                                               {"sse", KernelIsa::kSse},
                                               {"scalar", KernelIsa::kScalar}};

template <class E>
constexpr bool kIgnoresCase = std::is_same_v<E, LogLevel> || std::is_same_v<E, LogSubsys>;

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

template <> std::span<const Spelling<Transport>> spellings() { return kTransports; }
template <> std::span<const Spelling<HangReport>> spellings() { return kHangReports; }
template <> std::span<const Spelling<RecorderFormat>> spellings() { return kRecorderFormats; }
template <> std::span<const Spelling<LogLevel>> spellings() { return kLogLevels; }
template <> std::span<const Spelling<LogSubsys>> spellings() { return kLogSubsystems; }
template <> std::span<const Spelling<KernelIsa>> spellings() { return kKernelIsas; }

template <class E>
std::optional<E> parse_enum(std::string_view text) {
  const std::string key = kIgnoresCase<E> ? upper(text) : std::string(text);
  for (const auto& s : spellings<E>())
    if (key == s.name) return s.value;
  return std::nullopt;
}

template <class E>
std::string spelling_list() {
  std::string out;
  for (const auto& s : spellings<E>()) out += (out.empty() ? "" : ", ") + std::string(s.name);
  return out;
}

#define CHORUS_VALUES_INSTANTIATE(E)                          \
  template std::optional<E> parse_enum<E>(std::string_view); \
  template std::string spelling_list<E>();
CHORUS_VALUES_INSTANTIATE(Transport)
CHORUS_VALUES_INSTANTIATE(HangReport)
CHORUS_VALUES_INSTANTIATE(RecorderFormat)
CHORUS_VALUES_INSTANTIATE(LogLevel)
CHORUS_VALUES_INSTANTIATE(LogSubsys)
CHORUS_VALUES_INSTANTIATE(KernelIsa)
#undef CHORUS_VALUES_INSTANTIATE

std::optional<unsigned> parse_subsys_list(std::string_view text) {
  unsigned mask = 0;
  for (const auto& raw : str_split(std::string(text), ',')) {
    const std::string s = upper(str_trim(raw));
    if (s == "ALL" || s.empty()) {
      mask = kAllSubsys;
      continue;
    }
    auto one = parse_enum<LogSubsys>(s);
    if (!one) return std::nullopt;
    mask |= static_cast<unsigned>(*one);
  }
  return mask ? mask : kAllSubsys;
}

std::string subsys_list_name(unsigned mask) {
  if (mask == kAllSubsys) return "ALL";
  std::string out;
  for (const auto& s : spellings<LogSubsys>())
    if (mask & static_cast<unsigned>(s.value)) out += (out.empty() ? "" : ",") + std::string(s.name);
  return out;
}

}  // namespace chorus::config
