// chorus-info: prints the Chorus version and every configuration parameter
// (CHORUS_* environment variable) with its type, default, current value, unit and doc.
//
//   chorus-info              aligned text table
//   chorus-info --json       JSON object {"version", "params": [...]}
//   chorus-info --markdown   Markdown table for docs/CONFIG.md
//   chorus-info --cores [--repeat N] [--every S] [--json]
//                            how far apart the processors of its affinity mask are: a
//                            cache line's round trip and a 64 KiB hand-over per pair
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <thread>

#include "chorus/info.h"
#include "core_trips.h"
#include "param_table.h"

namespace {

int print_core_trips(int repeat, double every_s, bool json) {
  std::vector<int> cpus = chorus_info::allowed_cpus();
  if (cpus.size() < 2) {
    std::cerr << "chorus-info: --cores needs at least 2 processors in the affinity mask, "
                 "this process has " << cpus.size() << "\n";
    return 2;
  }
  const auto start = std::chrono::steady_clock::now();
  if (json) std::cout << "[";
  for (int r = 0; r < repeat; ++r) {
    if (r > 0) std::this_thread::sleep_for(std::chrono::duration<double>(every_s));
    std::vector<chorus_info::CoreTrip> trips = chorus_info::pairs_of(cpus);
    for (chorus_info::CoreTrip& t : trips) t = chorus_info::measure(t.a, t.b);
    if (json) {
      std::cout << (r ? "," : "") << chorus_info::format_trips_json(cpus, trips);
    } else {
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      char head[64];
      std::snprintf(head, sizeof(head), "# measurement %d, %.2f s from the start\n", r + 1, s);
      std::cout << head << chorus_info::format_trips_text(trips);
    }
  }
  if (json) std::cout << "]\n";
  return std::cout.good() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Print the Chorus version and its configuration parameters, or (--cores) how "
               "far apart the processors of the affinity mask are."};
  bool json = false;
  bool markdown = false;
  auto* json_flag = app.add_flag("--json", json, "Print as JSON (the table, or with --cores the pairs)");
  auto* markdown_flag =
      app.add_flag("--markdown", markdown, "Print a Markdown table (for docs/CONFIG.md)")
          ->excludes(json_flag);
  bool cores = false;
  int repeat = 1;
  auto* cores_flag =
      app.add_flag("--cores", cores,
                   "Measure how far apart the processors of the affinity mask are: a cache "
                   "line's round trip and a 64 KiB hand-over between two pinned threads, per "
                   "pair (every pair up to 16 processors, else the first with each other)")
          ->excludes(markdown_flag);
  app.add_option("--repeat", repeat, "With --cores: measure this many times, one after another")
      ->check(CLI::Range(1, 10000))
      ->needs(cores_flag);
  double every_s = 0;
  app.add_option("--every", every_s, "With --repeat: seconds between measurements")
      ->check(CLI::Range(0.0, 3600.0))
      ->needs(cores_flag);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (cores) return print_core_trips(repeat, every_s, json);
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
