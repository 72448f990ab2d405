// chorus-tune: per collective, rank count (the world it runs in) and size, times every
// algorithm this host can run, prints the default choice against the best with the loss
// per cell and the share of cells within the tolerance, and writes a tuning table
// (--write). Runs under any launcher (Communicator::init_from_env); only rank 0 prints.
// Exit status: 0 on success, 1 on errors, 2 on usage errors.
#include <cstdio>
#include <ctime>
#include <vector>

#include "chorus/communicator.h"
#include "chorus/status.h"
#include "report.h"
#include "sweep.h"
#include "table.h"
#include "tune_config.h"

namespace {

int tune(const chorus_tune::TuneConfig& cfg) {
  chorus::Communicator comm = chorus::Communicator::init_from_env();
  const bool print = comm.rank() == 0;
  if (print) {
    std::printf("# chorus-tune: %d ranks, transport %s, %d rounds of %d calls (fewer above 1 "
                "MiB), slowest rank's median round of back-to-back calls, tolerance %.0f%%\n",
                comm.size(), comm.transport_name().c_str(), cfg.rounds, cfg.iters, cfg.tolerance);
    std::fflush(stdout);
  }
  const std::vector<chorus_tune::Cell> cells = chorus_tune::sweep(comm, cfg);
  int rc = 0;
  if (print) {
    chorus_tune::print_cells(cells, cfg.tolerance);
    if (!cfg.write_path.empty()) {
      const std::string error = chorus_tune::write_table(cfg.write_path, cells);
      if (!error.empty()) {
        std::fprintf(stderr, "chorus-tune: %s\n", error.c_str());
        rc = 1;
      } else {
        std::printf("# table written to %s (use: CHORUS_TUNING_TABLE=%s)\n",
                    cfg.write_path.c_str(), cfg.write_path.c_str());
      }
    }
  }
  comm.barrier();
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  chorus_tune::TuneConfig cfg;
  if (int rc = chorus_tune::parse_args(argc, argv, &cfg); rc >= 0) return rc;
  try {
    return tune(cfg);
  } catch (const chorus::Error& e) {
    std::fprintf(stderr, "chorus-tune: %s\n", e.what());
    return 1;
  }
}
