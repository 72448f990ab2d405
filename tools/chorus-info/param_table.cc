// The three renderings of the configuration table printed by chorus-info.
#include "param_table.h"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>

namespace chorus_info {
namespace {

constexpr std::size_t kColumns = 6;
using Row = std::array<std::string, kColumns>;

Row text_row(const chorus::ParamInfo& p) {
  return {p.name, p.type, p.default_value.empty() ? "-" : p.default_value,
          p.is_set ? p.current : "(unset)", p.unit.empty() ? "-" : p.unit, p.doc};
}

// Markdown cells may not contain '|' or line breaks.
std::string md_cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out;
}

std::string md_code(const std::string& s) { return s.empty() ? "" : "`" + md_cell(s) + "`"; }

}  // namespace

std::string format_text(const std::vector<chorus::ParamInfo>& params) {
  std::vector<Row> rows{{"NAME", "TYPE", "DEFAULT", "CURRENT", "UNIT", "DESCRIPTION"}};
  for (const chorus::ParamInfo& p : params) rows.push_back(text_row(p));
  std::array<std::size_t, kColumns> width{};
  for (const Row& r : rows)
    for (std::size_t c = 0; c < kColumns; ++c) width[c] = std::max(width[c], r[c].size());
  std::string out;
  for (const Row& r : rows) {
    for (std::size_t c = 0; c + 1 < kColumns; ++c) {
      out += r[c];
      out.append(width[c] - r[c].size() + 2, ' ');
    }
    out += r[kColumns - 1] + "\n";
  }
  return out;
}

std::string format_json(const char* version, const std::vector<chorus::ParamInfo>& params) {
  using Json = nlohmann::ordered_json;
  Json list = Json::array();
  for (const chorus::ParamInfo& p : params) {
    list.push_back({{"name", p.name},
                    {"type", p.type},
                    {"default", p.default_value},
                    {"current", p.is_set ? Json(p.current) : Json()},
                    {"is_set", p.is_set},
                    {"unit", p.unit},
                    {"doc", p.doc}});
  }
  Json doc = {{"version", version}, {"params", list}};
  return doc.dump(2) + "\n";
}

std::string format_markdown(const std::vector<chorus::ParamInfo>& params) {
  std::string out = "| Name | Type | Default | Unit | Description |\n";
  out += "|------|------|---------|------|-------------|\n";
  for (const chorus::ParamInfo& p : params) {
    out += "| " + md_code(p.name) + " | " + md_cell(p.type) + " | " + md_code(p.default_value) +
           " | " + md_cell(p.unit) + " | " + md_cell(p.doc) + " |\n";
  }
  return out;
}

}  // namespace chorus_info
