// chorus-info: prints the Chorus version and every configuration parameter
// (CHORUS_* environment variable) with its type, default, current value, unit and doc.
//
//   chorus-info              aligned text table
//   chorus-info --json       JSON object {"version", "params": [...]}
//   chorus-info --markdown   Markdown table for docs/CONFIG.md
#include <CLI/CLI.hpp>
#include <iostream>

#include "chorus/info.h"
#include "param_table.h"

int main(int argc, char** argv) {
  CLI::App app{"Print the Chorus version and its configuration parameters."};
  bool json = false;
  bool markdown = false;
  auto* json_flag = app.add_flag("--json", json, "Print the table as JSON");
  app.add_flag("--markdown", markdown, "Print a Markdown table (for docs/CONFIG.md)")
      ->excludes(json_flag);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  std::vector<chorus::ParamInfo> params = chorus::config_params();
  if (json) {
    std::cout << chorus_info::format_json(chorus::version(), params);
  } else if (markdown) {
    std::cout << chorus_info::format_markdown(params);
  } else {
    std::cout << "Chorus " << chorus::version() << "\n\n" << chorus_info::format_text(params);
  }
  return std::cout.good() ? 0 : 1;
}
