// Writing the tuning table (table.h). Sizes are the selector's: count x dtype size.
#include "table.h"

#include <fstream>

#include <nlohmann/json.hpp>

namespace chorus_tune {

std::string write_table(const std::string& path, const std::vector<Cell>& cells) {
  using json = nlohmann::json;
  json rows = json::array();
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const Cell& c = cells[i];
    const bool first = i == 0 || cells[i - 1].op != c.op || cells[i - 1].ranks != c.ranks;
    if (!first && cells[i - 1].best == c.best) continue;  // extends the open row
    if (!first) rows.back()["hi"] = c.sel_bytes;
    rows.push_back(json{{"op", c.op}, {"ranks", c.ranks}, {"lo", first ? 0 : c.sel_bytes},
                        {"hi", nullptr}, {"algo", c.best}});
  }
  std::ofstream out(path, std::ios::trunc);
  out << json{{"version", 1}, {"table", rows}}.dump(2) << "\n";
  if (!out) return "cannot write " + path;
  return "";
}

}  // namespace chorus_tune
