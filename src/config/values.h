// The closed sets of the parameter table: their enums (the public ones live in
// chorus/options.h) and their spellings, the one list each value is parsed from.
#pragma once
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "chorus/options.h"

namespace chorus::config {

// CHORUS_DEBUG. diag::LogLevel is this type.
enum class LogLevel : int { kNone = 0, kWarn = 1, kInfo = 2, kDebug = 3, kTrace = 4 };
// CHORUS_DEBUG_SUBSYS: one bit each; the parameter's value is a mask of them.
// diag::Subsys is this type.
enum class LogSubsys : unsigned { kInit = 1, kBoot = 2, kNet = 4, kAlgo = 8, kColl = 16, kEnv = 32 };
inline constexpr unsigned kAllSubsys = ~0u;
// CHORUS_KERNEL_ISA (core lowers it to what the CPU has).
enum class KernelIsa { kAuto, kAvx512, kAvx2, kSse, kScalar };

// One spelling of an enumerator.
template <class E>
struct Spelling {
  const char* name;
  E value;
};

// Every spelling of E's values, in the order the docs list them.
template <class E>
std::span<const Spelling<E>> spellings();

// The spelling of `v` ("?" for a value outside the set).
template <class E>
const char* name_of(E v) {
  for (const auto& s : spellings<E>())
    if (s.value == v) return s.name;
  return "?";
}

// The value spelled `text` (CHORUS_DEBUG and CHORUS_DEBUG_SUBSYS ignore case).
template <class E>
std::optional<E> parse_enum(std::string_view text);

// "a, b, c": the spellings, for error messages.
template <class E>
std::string spelling_list();

// CHORUS_DEBUG_SUBSYS text ("INIT,NET", "ALL", "" = ALL) -> mask; nullopt for an unknown name.
std::optional<unsigned> parse_subsys_list(std::string_view text);
// The mask as text ("ALL" for every bit).
std::string subsys_list_name(unsigned mask);

}  // namespace chorus::config
