// chorus-bench: bandwidth and bit-exact correctness of Chorus collectives over a range
// of sizes, printed like nccl-tests (only rank 0 prints). Runs under any launcher
// (Communicator::init_from_env). Exit status: 0 when every check passed, 1 on wrong
// results or errors, 2 on usage errors.
#include <cstdio>
#include <vector>

#include "bench_config.h"
#include "collective.h"
#include "chorus/communicator.h"
#include "chorus/status.h"
#include "report.h"
#include "runner.h"

namespace {

using chorus_bench::BenchConfig;
using chorus_bench::RowResult;

// "# estimate: <algo> (<source>) predicted <us> us, measured <us> us, measured/predicted <x>"
void print_estimate(chorus::Communicator& comm, const BenchConfig& cfg, chorus_bench::Coll c,
                    std::size_t size, const RowResult& row) {
  const chorus_bench::Shape s =
      chorus_bench::shape_for(c, size, chorus::dtype_size(cfg.dtype), comm.size());
  const chorus::Estimate e = comm.estimate(chorus_bench::coll_name(c), s.count, cfg.dtype);
  const double measured = row.out_of_place.time_us;
  std::printf("# estimate: %-12s (%s) predicted %10.1f us, measured %10.1f us, "
              "measured/predicted %.2f\n",
              e.algo.c_str(), e.source.c_str(), e.predicted_us, measured,
              e.predicted_us > 0 ? measured / e.predicted_us : 0.0);
}

// Every row of every selected collective; rank 0 prints them as they complete.
std::vector<RowResult> run_all(chorus::Communicator& comm, const BenchConfig& cfg, bool print) {
  std::vector<RowResult> rows;
  chorus_bench::Runner runner(comm, cfg);
  for (chorus_bench::Coll c : cfg.colls) {
    if (print) chorus_bench::print_table_header(c);
    std::size_t size = cfg.min_bytes;
    while (size <= cfg.max_bytes) {
      if (auto row = runner.run_row(c, size)) {
        if (print) chorus_bench::print_row(*row);
        if (print && cfg.estimate) print_estimate(comm, cfg, c, size, *row);
        rows.push_back(*row);
      }
      if (size > cfg.max_bytes / cfg.step_factor) break;
      size = std::max(size * cfg.step_factor, size + 1);
    }
    if (print) std::printf("#\n");
  }
  return rows;
}

int bench(const BenchConfig& cfg) {
  chorus::Options options;
  if (!cfg.algo.empty()) options.algo = cfg.algo;  // else CHORUS_ALGO
  if (cfg.stats) options.stats = true;              // else CHORUS_STATS
  chorus::Communicator comm = chorus::Communicator::init_from_env(options);
  bool print = comm.rank() == 0;
  if (cfg.root >= comm.size()) {
    if (print) std::fprintf(stderr, "--root %d is not a rank of %d\n", cfg.root, comm.size());
    comm.barrier();  // rank 0 prints before any rank's exit makes the launcher stop it
    return 2;
  }
  if (print) chorus_bench::print_banner(cfg, comm.size(), comm.transport_name());
  std::vector<RowResult> rows = run_all(comm, cfg, print);
  if (print) {
    chorus_bench::print_footer(rows, cfg.check);
    if (!cfg.json_path.empty()) {
      std::string error = chorus_bench::write_json(cfg.json_path, rows, comm.size(), cfg.sync);
      if (!error.empty()) {
        std::fprintf(stderr, "chorus-bench: %s\n", error.c_str());
        return 1;
      }
    }
  }
  if (print && cfg.stats) {
    std::printf("# statistics of rank 0 (Communicator::stats; warm-up, checks and barriers "
                "included):\n%s", comm.stats_text().c_str());
    if (!cfg.stats_json.empty()) {
      std::string error = chorus_bench::write_stats_json(cfg.stats_json, comm.stats());
      if (!error.empty()) {
        std::fprintf(stderr, "chorus-bench: %s\n", error.c_str());
        return 1;
      }
    }
  }
  comm.barrier();  // no rank tears down while another still needs it
  return chorus_bench::total_wrong(rows) > 0 ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  BenchConfig cfg;
  if (int rc = chorus_bench::parse_args(argc, argv, &cfg); rc >= 0) return rc;
  try {
    return bench(cfg);
  } catch (const chorus::Error& e) {
    std::fprintf(stderr, "chorus-bench: %s\n", e.what());
    return 1;
  }
}
