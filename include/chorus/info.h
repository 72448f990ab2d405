// Introspection: version and the configuration table (what chorus-info prints).
#pragma once
#include <string>
#include <vector>

#include "chorus/export.h"

namespace chorus {

CHORUS_EXPORT const char* version() noexcept;

// One configuration parameter (a CHORUS_* environment variable).
struct ParamInfo {
  std::string name;           // e.g. "CHORUS_TIMEOUT"
  std::string type;           // "int", "bytes", "string", "bool", "enum", "list"
  std::string default_value;  // as written in the table
  std::string unit;           // e.g. "s", "bytes", or ""
  std::string doc;            // one line
  std::string current;        // value in this process's environment ("" when unset)
  bool is_set;                // true when the variable is set in the environment
};

// Every parameter Chorus reads, in table order.
CHORUS_EXPORT std::vector<ParamInfo> config_params();

}  // namespace chorus
