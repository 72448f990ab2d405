// Builds each rank's environment so that launcher detection in the ranks is unambiguous.
#include "child_env.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <string_view>

namespace chorus_run {
namespace {

// Exact names removed from the children (torchrun and the variables chorus-run sets).
constexpr std::string_view kExactNames[] = {
    "RANK",           "WORLD_SIZE",       "LOCAL_RANK",        "LOCAL_WORLD_SIZE",
    "GROUP_RANK",     "ROLE_RANK",        "MASTER_ADDR",       "MASTER_PORT",
    "CHORUS_RANK",    "CHORUS_WORLD_SIZE", "CHORUS_LOCAL_RANK", "CHORUS_STORE_ADDR",
    "CHORUS_JOB_ID",
};
// Prefixes removed from the children (Open MPI, PMI/PMIx, Hydra, Slurm, torchelastic).
constexpr std::string_view kPrefixes[] = {"OMPI_", "PMI_", "PMIX_", "HYDRA_", "SLURM_",
                                          "TORCHELASTIC_"};

}  // namespace

bool is_launcher_variable(const std::string& entry) {
  std::string_view name(entry);
  name = name.substr(0, name.find('='));
  for (std::string_view exact : kExactNames)
    if (name == exact) return true;
  for (std::string_view prefix : kPrefixes)
    if (name.starts_with(prefix)) return true;
  return false;
}

std::vector<std::string> child_environment(char** parent, const JobEnv& job, int rank,
                                           int local_rank) {
  std::vector<std::string> env;
  for (char** p = parent; p != nullptr && *p != nullptr; ++p) {
    std::string entry(*p);
    if (!is_launcher_variable(entry)) env.push_back(std::move(entry));
  }
  env.push_back("CHORUS_RANK=" + std::to_string(rank));
  env.push_back("CHORUS_WORLD_SIZE=" + std::to_string(job.world_size));
  env.push_back("CHORUS_LOCAL_RANK=" + std::to_string(local_rank));
  env.push_back("CHORUS_STORE_ADDR=" + job.store_addr);
  env.push_back("CHORUS_JOB_ID=" + job.job_id);
  return env;
}

std::string make_job_id() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  auto now = std::chrono::system_clock::now().time_since_epoch();
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now).count();
  std::random_device rd;
  char buf[384];
  std::snprintf(buf, sizeof(buf), "%s-%d-%llx-%08x", host, static_cast<int>(getpid()),
                static_cast<unsigned long long>(ns), static_cast<unsigned>(rd()));
  return buf;
}

}  // namespace chorus_run
