// Config: every CHORUS_* parameter parsed and validated once (see params.def), and
// public Options laid over it: the one place a setting's text becomes a value.
#pragma once
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chorus/options.h"
#include "config/environment.h"
#include "config/values.h"
#include "util/status.h"

namespace chorus::config {

enum class ParamType {
  kInt, kBytes, kSeconds, kBool, kString,
  kTransport, kHangReport, kRecorderFormat, kLogLevel, kLogSubsys, kKernelIsa,
};
enum class Scope { kComm, kProcess, kLaunch };

// The C++ type of a parameter's value.
template <ParamType T> struct ValueOf;
template <> struct ValueOf<ParamType::kInt> { using type = std::int64_t; };
template <> struct ValueOf<ParamType::kBytes> { using type = std::uint64_t; };
template <> struct ValueOf<ParamType::kSeconds> { using type = std::chrono::milliseconds; };
template <> struct ValueOf<ParamType::kBool> { using type = bool; };
template <> struct ValueOf<ParamType::kString> { using type = std::string; };
template <> struct ValueOf<ParamType::kTransport> { using type = Transport; };
template <> struct ValueOf<ParamType::kHangReport> { using type = HangReport; };
template <> struct ValueOf<ParamType::kRecorderFormat> { using type = RecorderFormat; };
template <> struct ValueOf<ParamType::kLogLevel> { using type = LogLevel; };
template <> struct ValueOf<ParamType::kLogSubsys> { using type = unsigned; };  // mask
template <> struct ValueOf<ParamType::kKernelIsa> { using type = KernelIsa; };
template <ParamType T> using value_t = typename ValueOf<T>::type;

// How Config holds it: numbers may be unset (an int row whose default is ""), the rest
// always has a value.
template <ParamType T>
using held_t = std::conditional_t<T == ParamType::kInt || T == ParamType::kBytes ||
                                      T == ParamType::kSeconds,
                                  std::optional<value_t<T>>, value_t<T>>;

// Parsed values, one field per row.
struct Config {
#define CHORUS_PARAM(field, NAME, type, scope, def, unit, doc) held_t<ParamType::type> field{};
#include "config/params.def"
#undef CHORUS_PARAM
};

// Static description of one parameter.
struct ParamDesc {
  const char* field;  // e.g. "chunk_bytes" (the Options field for a kComm row)
  const char* name;   // e.g. "CHORUS_CHUNK_SIZE"
  ParamType type;
  Scope scope;
  const char* default_value;
  const char* unit;
  const char* doc;
};

// Every parameter, in table order.
const std::vector<ParamDesc>& params();
// "int", "bytes", "bool", "string", "enum", "list" (what chorus-info prints).
const char* to_string(ParamType t);
const char* to_string(Scope s);

// Parses every parameter from `env` (unset or empty = the default; an empty bool = 0);
// kInvalidArgument naming the variable and the value on a bad one.
Result<Config> load(const Environment& env);

// `base` with every set field of `options` laid over it, each checked as the variable it
// replaces is (kInvalidArgument naming "Options::<field>").
Result<Config> with_options(Config base, const Options& options);

// Sets Options field `field` from text written as its variable would be (kInvalidArgument
// naming "Options::<field>" for an unknown field or a bad value).
Status parse_option(Options& options, std::string_view field, std::string_view text);

// The process-wide Config, loaded from the real environment on first use.
// Returns the load error (every later call returns it too).
Result<Config> process_config();

}  // namespace chorus::config
