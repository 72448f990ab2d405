// The environment of a launched rank: the parent's, minus other launchers' variables,
// plus the CHORUS_* launch variables.
#pragma once
#include <string>
#include <vector>

namespace chorus_run {

// What every rank of one launch shares.
struct JobEnv {
  int world_size = 0;
  std::string store_addr;  // "host:port"
  std::string job_id;
};

// True when `entry` ("NAME=value") belongs to another launcher (torchrun, Open MPI,
// MPICH/PMI, Slurm) or is one of the CHORUS_* launch variables that chorus-run sets.
bool is_launcher_variable(const std::string& entry);

// `parent` (entries "NAME=value") without launcher variables, plus CHORUS_RANK (`rank`,
// global), CHORUS_WORLD_SIZE, CHORUS_LOCAL_RANK (`local_rank`, the index on this node),
// CHORUS_STORE_ADDR and CHORUS_JOB_ID.
std::vector<std::string> child_environment(char** parent, const JobEnv& job, int rank,
                                           int local_rank);

// An identifier unique to this launch: host, pid, time and random bits.
std::string make_job_id();

}  // namespace chorus_run
