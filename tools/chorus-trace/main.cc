// chorus-trace: reads CHORUS_TIMELINE files. `merge` writes one trace of all ranks
// (Perfetto / chrome://tracing); `report` prints operation statistics, arrival skew,
// stragglers and stream overlap (text, and JSON with --json). Exit status 0, 1 on
// unreadable input, 2 on usage errors.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "merge.h"
#include "report.h"
#include "trace.h"

namespace {

std::vector<chorus_trace::RankFile> load_all(const std::vector<std::string>& paths) {
  std::vector<chorus_trace::RankFile> files;
  for (const auto& p : paths)
    for (auto& f : chorus_trace::load(p)) files.push_back(std::move(f));
  std::sort(files.begin(), files.end(),
            [](const auto& a, const auto& b) { return a.rank < b.rank; });
  return files;
}

bool write_json(const std::string& path, const nlohmann::json& j) {
  std::ofstream out(path);
  out << j.dump() << "\n";
  if (out) return true;
  std::fprintf(stderr, "chorus-trace: cannot write %s\n", path.c_str());
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Merge and analyse Chorus timelines (CHORUS_TIMELINE=path.%r.json)"};
  app.require_subcommand(1);
  std::vector<std::string> merge_in, report_in;
  std::string merge_out = "chorus-trace.json", report_json;
  auto* merge = app.add_subcommand("merge", "Write every rank's timeline into one trace "
                                            "(ranks as processes, phases added)");
  merge->add_option("files", merge_in, "Per-rank timeline files")->required()->check(CLI::ExistingFile);
  merge->add_option("-o,--output", merge_out, "Merged trace")->capture_default_str();
  auto* report = app.add_subcommand("report", "Per op and size: count, bytes, time p50/p99, "
                                              "busbw, arrival skew; stragglers; stream overlap");
  report->add_option("files", report_in, "Per-rank timeline files or one merged trace")
      ->required()->check(CLI::ExistingFile);
  report->add_option("--json", report_json, "Also write the report as JSON to this file");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    if (merge->parsed()) {
      const auto files = load_all(merge_in);
      if (!write_json(merge_out, chorus_trace::merge(files))) return 1;
      std::printf("chorus-trace: merged %zu ranks into %s\n", files.size(), merge_out.c_str());
      return 0;
    }
    const auto files = load_all(report_in);
    const nlohmann::json r = chorus_trace::report(files);
    std::fputs(chorus_trace::report_text(r).c_str(), stdout);
    if (!report_json.empty() && !write_json(report_json, r)) return 1;
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "chorus-trace: %s\n", e.what());
    return 1;
  }
}
