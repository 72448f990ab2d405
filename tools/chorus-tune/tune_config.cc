// Command-line parsing of chorus-tune (CLI11).
#include "tune_config.h"

#include <CLI/CLI.hpp>
#include <iostream>

#include "cli_values.h"

namespace chorus_tune {

using chorus_bench::Coll;

int parse_args(int argc, char** argv, TuneConfig* cfg) {
  CLI::App app{"Time every algorithm of each collective per size on this host, print the "
               "default choice against the best, and write a tuning table. Run under a "
               "launcher, e.g. chorus-run -n 4 chorus-tune --write table.json"};
  std::string minb = "8", maxb = "64M";
  std::string colls = "all_reduce,broadcast,reduce,all_gather,reduce_scatter,all_to_all";
  app.add_option("-b,--minbytes", minb, "Smallest size (bytes; K/M/G suffixes)")
      ->check(chorus_tools::bytes_validator())->capture_default_str();
  app.add_option("-e,--maxbytes", maxb, "Largest size (bytes; K/M/G suffixes)")
      ->check(chorus_tools::bytes_validator())->capture_default_str();
  app.add_option("-f,--stepfactor", cfg->step_factor, "Multiply the size by this each cell")
      ->check(CLI::Range(2, 1 << 20))->capture_default_str();
  app.add_option("-n,--iters", cfg->iters, "Timed calls per algorithm and round")
      ->check(CLI::Range(1, 1 << 30))->capture_default_str();
  app.add_option("-w,--warmup_iters", cfg->warmup_iters, "Untimed calls per algorithm and round")
      ->check(CLI::Range(0, 1 << 30))->capture_default_str();
  app.add_option("--rounds", cfg->rounds,
                 "Rounds; each times every algorithm in turn (interleaved); a time is the "
                 "slowest rank's median over rounds of the round's mean per call (back to back)")
      ->check(CLI::Range(1, 1000))->capture_default_str();
  app.add_option("--tolerance", cfg->tolerance, "Loss (%) that still counts as within the best")
      ->check(CLI::Range(0.0, 1000.0))->capture_default_str();
  app.add_option("--op", colls, "Comma-separated collectives (all_reduce, broadcast, reduce, "
                 "all_gather, reduce_scatter, all_to_all)")->capture_default_str();
  app.add_option("--write", cfg->write_path,
                 "Write the fastest algorithm per (collective, ranks, size range) to this "
                 "file (JSON; use with CHORUS_TUNING_TABLE)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  chorus_tools::parse_bytes(minb, &cfg->min_bytes);
  chorus_tools::parse_bytes(maxb, &cfg->max_bytes);
  std::string error;
  if (cfg->min_bytes > cfg->max_bytes) error = "--minbytes is larger than --maxbytes";
  std::size_t pos = 0;
  while (error.empty() && pos <= colls.size()) {
    const std::size_t comma = std::min(colls.find(',', pos), colls.size());
    const std::string name = colls.substr(pos, comma - pos);
    pos = comma + 1;
    if (name.empty()) continue;
    auto one = chorus_bench::parse_colls(name);
    if (!one || one->size() != 1 || *one->begin() == Coll::kGather || *one->begin() == Coll::kScatter)
      error = "--op: '" + name + "' is not a collective chorus-tune sweeps";
    else
      cfg->colls.push_back(one->front());
  }
  if (error.empty() && cfg->colls.empty()) error = "--op: no collective";
  if (!error.empty()) {
    std::cerr << error << "\nRun with --help for more information.\n";
    return 2;
  }
  return -1;
}

}  // namespace chorus_tune
