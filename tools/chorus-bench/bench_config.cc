// Command-line parsing of chorus-bench (CLI11), with nccl-tests' flag names.
#include "bench_config.h"

#include "cli_values.h"

#include <CLI/CLI.hpp>
#include <iostream>

namespace chorus_bench {

using chorus_tools::bytes_validator;
using chorus_tools::parse_bytes;

namespace {

// Converts the string options; returns an error message or "".
std::string finish(const std::string& minb, const std::string& maxb, const std::string& op,
                   const std::string& dtype, const std::string& colls, BenchConfig* cfg) {
  parse_bytes(minb, &cfg->min_bytes);
  parse_bytes(maxb, &cfg->max_bytes);
  if (cfg->min_bytes > cfg->max_bytes) return "--minbytes is larger than --maxbytes";
  auto parsed_op = chorus::parse_reduce_op(op);
  if (!parsed_op) return "--redop: unknown reduction '" + op + "' (sum, prod, min, max, avg)";
  cfg->op = *parsed_op;
  auto parsed_dtype = chorus::parse_dtype(dtype);
  if (!parsed_dtype) return "--datatype: unknown type '" + dtype + "'";
  cfg->dtype = *parsed_dtype;
  auto parsed_colls = parse_colls(colls);
  if (!parsed_colls) return "--op: unknown collective '" + colls + "'";
  cfg->colls = *parsed_colls;
  return "";
}

}  // namespace

int parse_args(int argc, char** argv, BenchConfig* cfg) {
  CLI::App app{"Measure and check Chorus collectives (nccl-tests style). Run under a "
               "launcher, e.g. chorus-run -n 4 chorus-bench -b 8 -e 128M"};
  std::string minb = "8", maxb = "16M", op = "sum", dtype = "float32", colls = "all_reduce";
  app.add_option("-b,--minbytes", minb, "Smallest size (bytes; K/M/G suffixes)")
      ->check(bytes_validator())->capture_default_str();
  app.add_option("-e,--maxbytes", maxb, "Largest size (bytes; K/M/G suffixes)")
      ->check(bytes_validator())->capture_default_str();
  app.add_option("-f,--stepfactor", cfg->step_factor, "Multiply the size by this each row")
      ->check(CLI::Range(2, 1 << 20))->capture_default_str();
  app.add_option("-n,--iters", cfg->iters, "Timed iterations per size")
      ->check(CLI::Range(1, 1 << 30))->capture_default_str();
  app.add_option("-w,--warmup_iters", cfg->warmup_iters, "Untimed iterations per size")
      ->check(CLI::Range(0, 1 << 30))->capture_default_str();
  app.add_option("-c,--check", cfg->check, "Check results bit-exactly (0/1)")->capture_default_str();
  app.add_option("-o,--redop", op, "sum, prod, min, max or avg")->capture_default_str();
  app.add_option("-d,--datatype", dtype,
                 "int8, uint8, int32, uint32, int64, uint64, float16, bfloat16, float32, "
                 "float64 (aliases: half/fp16, bf16, float/fp32, double/fp64, int, uint)")
      ->capture_default_str();
  app.add_option("-r,--root", cfg->root, "Root of broadcast/reduce/gather/scatter")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  app.add_option("--op", colls,
                 "all_reduce, all_gather, reduce_scatter, broadcast, reduce, all_to_all, "
                 "gather, scatter, or all")->capture_default_str();
  app.add_option("--json", cfg->json_path, "Also write every row to this file as JSON");
  app.add_flag("--stats", cfg->stats,
               "Collect per-operation statistics; rank 0 prints its table at the end");
  app.add_option("--stats-json", cfg->stats_json,
                 "With --stats: rank 0 also writes its statistics rows to this file as JSON");
  app.add_flag("--estimate", cfg->estimate,
               "After each row, print the algorithm the library chooses and the cost model's "
               "predicted time next to the measured out-of-place time (Communicator::estimate)");
  app.add_flag("-R,--registered", cfg->registered,
               "Buffers from chorus::mem_alloc (memory the ranks of a host map: single-copy "
               "transfers become plain copies) instead of the heap; the first row warms up "
               "at least 12 iterations, while the ranks agree that every buffer is registered");
  app.add_flag("--sync", cfg->sync,
               "Barrier before every timed iteration; each iteration is timed from the "
               "barrier to the last rank's completion (mean, fastest and slowest of single "
               "operations instead of back-to-back ones)");
  app.add_option("--algo", cfg->algo, "Algorithm override (Options::algo, like CHORUS_ALGO)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  std::string error = finish(minb, maxb, op, dtype, colls, cfg);
  if (!error.empty()) {
    std::cerr << error << "\nRun with --help for more information.\n";
    return 2;
  }
  return -1;
}

}  // namespace chorus_bench
