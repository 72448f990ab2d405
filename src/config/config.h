// Config: every CHORUS_* parameter parsed and validated once (see params.def).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/environment.h"
#include "util/status.h"

namespace chorus::config {

enum class ParamType { kInt, kBytes, kString, kBool };

// Parsed values. Integer params whose default is "" are optional (unset = nullopt).
struct Config {
#define CHORUS_PARAM(field, NAME, type, def, unit, doc) CHORUS_CONFIG_FIELD_##type(field);
#define CHORUS_CONFIG_FIELD_kInt(f) std::optional<std::int64_t> f
#define CHORUS_CONFIG_FIELD_kBytes(f) std::optional<std::uint64_t> f
#define CHORUS_CONFIG_FIELD_kString(f) std::string f
#define CHORUS_CONFIG_FIELD_kBool(f) bool f = false
#include "config/params.def"
#undef CHORUS_PARAM
};

// Static description of one parameter.
struct ParamDesc {
  const char* name;
  ParamType type;
  const char* default_value;
  const char* unit;
  const char* doc;
};

// Every parameter, in table order.
const std::vector<ParamDesc>& params();
const char* to_string(ParamType t);

// Parses every parameter from `env`; kInvalidArgument naming the variable on a bad value.
Result<Config> load(const Environment& env);

// The process-wide Config, loaded from the real environment on first use.
// Returns the load error (every later call returns it too).
Result<Config> process_config();

}  // namespace chorus::config
