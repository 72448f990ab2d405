// Reads rank, size and the store address from a launcher's environment
// (chorus-run, torchrun, Open MPI, MPICH/Hydra, Slurm).
#pragma once
#include <string>

#include "config/environment.h"
#include "util/status.h"

namespace chorus::bootstrap {

struct LaunchInfo {
  int rank = -1;
  int size = -1;
  int local_rank = -1;      // -1 when the launcher does not say
  std::string store_host;   // where the TCP store is
  int store_port = -1;
  bool host_store = false;  // true: this process (rank 0 under mpirun/srun) must start the server
  std::string launcher;     // "chorus-run", "torchrun", "openmpi", "mpich", "slurm"
  std::string job_id;       // shared by the job's ranks ("" if unknown)
};

// Looks for the launchers in the documented order. kInvalidArgument naming the
// variables looked for when none is complete, or when values contradict (e.g. rank
// >= size, two launchers disagreeing on the rank).
Result<LaunchInfo> read_launch_env(const config::Environment& env);

}  // namespace chorus::bootstrap
