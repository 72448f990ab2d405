// Renders chorus::config_params() as an aligned text table, JSON or a Markdown table.
#pragma once
#include <string>
#include <vector>

#include "chorus/info.h"

namespace chorus_info {

// Columns name, type, default, current ("(unset)" when not set), unit, doc; an empty
// default or unit shows as "-".
std::string format_text(const std::vector<chorus::ParamInfo>& params);
// {"version": ..., "params": [{"name", "type", "default", "current" (null when unset),
//   "is_set", "unit", "doc"}]}
std::string format_json(const char* version, const std::vector<chorus::ParamInfo>& params);
// Markdown table: name | type | default | unit | description (for docs/CONFIG.md).
std::string format_markdown(const std::vector<chorus::ParamInfo>& params);

}  // namespace chorus_info
