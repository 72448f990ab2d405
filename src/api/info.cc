// chorus::version() and chorus::config_params(): what chorus-info prints.
#include "chorus/info.h"
#include "config/config.h"

#ifndef CHORUS_VERSION_STRING
#define CHORUS_VERSION_STRING "0.1.0"
#endif

namespace chorus {

const char* version() noexcept { return CHORUS_VERSION_STRING; }

std::vector<ParamInfo> config_params() {
  const auto& env = config::Environment::process();
  std::vector<ParamInfo> out;
  for (const auto& p : config::params()) {
    auto v = env.get(p.name);
    out.push_back(ParamInfo{p.name, config::to_string(p.type), p.default_value, p.unit, p.doc,
                            v.value_or(""), v.has_value()});
  }
  return out;
}

}  // namespace chorus
