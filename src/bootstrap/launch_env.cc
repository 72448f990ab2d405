// read_launch_env: finds rank, size, local rank, job id and the store address in the
// variables set by chorus-run, torchrun, Open MPI, MPICH/Hydra or Slurm (docs/STORE.md has
// the table), and rejects incomplete or contradictory settings with a message naming them.
#include "bootstrap/launch_env.h"

#include <optional>

#include "bootstrap/launch_address.h"
#include "diag/log.h"
#include "util/strings.h"

namespace chorus::bootstrap {
namespace {

struct Launcher {
  const char* name;  // LaunchInfo::launcher
  const char* label;
  const char* rank_var;
  const char* size_var;
  const char* local_var;
};

// In lookup order. Slurm comes last: srun and sbatch wrap the others (srun starting one
// torchrun per node, mpirun inside an allocation), so its variables then describe the outer
// allocation and are not compared with the inner launcher's.
constexpr Launcher kLaunchers[] = {
    {"chorus-run", "chorus-run", "CHORUS_RANK", "CHORUS_WORLD_SIZE", "CHORUS_LOCAL_RANK"},
    {"torchrun", "torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK"},
    {"openmpi", "Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
    {"mpich", "MPICH/Hydra", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"},
    {"slurm", "Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
};
constexpr const char* kJobIdVars[] = {"CHORUS_JOB_ID", "TORCHELASTIC_RUN_ID",
                                      "OMPI_MCA_ess_base_jobid", "SLURM_JOB_ID"};
constexpr int kDefaultPort = 29500;

bool is_set(const config::Environment& env, const char* var) { return env.get(var).has_value(); }

Result<int> read_int(const config::Environment& env, const char* var) {
  std::string value = env.get(var).value_or("");
  auto v = parse_int(value);
  if (!v || *v < -(1ll << 31) || *v >= (1ll << 31))
    return invalid_argument(str_printf("%s='%s' is not an integer", var, value.c_str()));
  return static_cast<int>(*v);
}

struct Ranks {
  int rank = -1;
  int size = -1;
};

// Rank and size of a launcher whose variables are both set.
Result<Ranks> read_ranks(const config::Environment& env, const Launcher& l) {
  Ranks r;
  CHORUS_ASSIGN_OR_RETURN(r.rank, read_int(env, l.rank_var));
  CHORUS_ASSIGN_OR_RETURN(r.size, read_int(env, l.size_var));
  return r;
}

std::string looked_for() {
  std::string s;
  for (const auto& l : kLaunchers)
    s += str_printf("%s%s/%s (%s)", s.empty() ? "" : "; ", l.rank_var, l.size_var, l.label);
  return s;
}

// Fails when a later launcher's complete variables contradict the chosen one's.
Status check_agreement(const config::Environment& env, const Launcher& chosen, Ranks mine) {
  bool after = false;
  for (const auto& l : kLaunchers) {
    if (&l == &chosen) {
      after = true;
      continue;
    }
    if (!after || std::string(l.name) == "slurm") continue;
    if (!is_set(env, l.rank_var) || !is_set(env, l.size_var)) continue;
    auto other = read_ranks(env, l);
    if (!other) continue;  // garbage in a launcher we do not use
    if (other->rank == mine.rank && other->size == mine.size) continue;
    return invalid_argument(str_printf(
        "launchers disagree: %s=%d %s=%d (%s) but %s=%d %s=%d (%s); unset the stale variables",
        chosen.rank_var, mine.rank, chosen.size_var, mine.size, chosen.label, l.rank_var,
        other->rank, l.size_var, other->size, l.label));
  }
  return Status();
}

Result<int> read_port(const config::Environment& env, const char* var, int max) {
  CHORUS_ASSIGN_OR_RETURN(int port, read_int(env, var));
  if (port < 1 || port > max)
    return invalid_argument(str_printf("%s=%d is out of range [1, %d]", var, port, max));
  return port;
}

// torchrun: its own TCPStore holds MASTER_PORT, so ours listens on MASTER_PORT + 1.
Status torchrun_store(const config::Environment& env, LaunchInfo& info) {
  for (const char* var : {"MASTER_ADDR", "MASTER_PORT"})
    if (!is_set(env, var))
      return invalid_argument(str_printf("RANK and WORLD_SIZE are set (torchrun) but %s is not "
                                         "(or set CHORUS_STORE_ADDR=host:port)", var));
  info.store_host = *env.get("MASTER_ADDR");
  CHORUS_ASSIGN_OR_RETURN(int port, read_port(env, "MASTER_PORT", 65534));
  info.store_port = port + 1;
  info.host_store = info.rank == 0;
  return Status();
}

// mpirun / srun: nobody started a store, so rank 0 hosts it at MASTER_ADDR or, under Slurm,
// on the first node of the allocation.
Status mpi_store(const config::Environment& env, const Launcher& l, LaunchInfo& info) {
  info.host_store = info.rank == 0;
  int port = kDefaultPort;
  if (is_set(env, "MASTER_PORT")) {
    CHORUS_ASSIGN_OR_RETURN(port, read_port(env, "MASTER_PORT", 65535));
  }
  if (auto addr = env.get("MASTER_ADDR"); addr && !addr->empty()) {
    info.store_host = *addr;
    info.store_port = port;
    return Status();
  }
  if (std::string(l.name) == "slurm") {
    for (const char* var : {"SLURM_JOB_NODELIST", "SLURM_NODELIST"}) {
      auto list = env.get(var);
      if (!list) continue;
      info.store_host = slurm_first_host(*list);
      if (info.store_host.empty())
        return invalid_argument(str_printf("%s='%s' is not a Slurm node list", var, list->c_str()));
      info.store_port = port;
      return Status();
    }
  }
  return invalid_argument(str_printf(
      "running under %s (%s=%d) but no store address is set: set MASTER_ADDR (rank 0's host) "
      "and MASTER_PORT (default %d), or CHORUS_STORE_ADDR=host:port",
      l.label, l.rank_var, info.rank, kDefaultPort));
}

Status read_store(const config::Environment& env, const Launcher& l, LaunchInfo& info) {
  const std::string name = l.name;
  if (auto addr = env.get("CHORUS_STORE_ADDR")) {
    CHORUS_ASSIGN_OR_RETURN(HostPort hp, parse_host_port("CHORUS_STORE_ADDR", *addr));
    info.store_host = hp.host;
    info.store_port = hp.port;
    // chorus-run and torchrun runs have their server elsewhere; under mpirun/srun nobody
    // else launched one, so rank 0 hosts it.
    info.host_store = name != "chorus-run" && name != "torchrun" && info.rank == 0;
    return Status();
  }
  if (name == "chorus-run")
    return invalid_argument("CHORUS_RANK and CHORUS_WORLD_SIZE are set (chorus-run) but "
                            "CHORUS_STORE_ADDR is not");
  if (name == "torchrun") return torchrun_store(env, info);
  return mpi_store(env, l, info);
}

}  // namespace

Result<LaunchInfo> read_launch_env(const config::Environment& env) {
  const Launcher* chosen = nullptr;
  for (const auto& l : kLaunchers) {
    if (is_set(env, l.rank_var) || is_set(env, l.size_var)) {
      chosen = &l;
      break;
    }
  }
  if (!chosen)
    return invalid_argument("no launcher environment found; looked for " + looked_for() +
                            " (chorus-run also needs CHORUS_STORE_ADDR, torchrun MASTER_ADDR/MASTER_PORT)");
  const Launcher& l = *chosen;
  for (const char* var : {l.rank_var, l.size_var})
    if (!is_set(env, var))
      return invalid_argument(str_printf("%s is set (%s) but %s is not",
                                         var == l.rank_var ? l.size_var : l.rank_var, l.label, var));
  CHORUS_ASSIGN_OR_RETURN(Ranks r, read_ranks(env, l));
  if (r.size < 1) return invalid_argument(str_printf("%s=%d must be >= 1", l.size_var, r.size));
  if (r.rank < 0 || r.rank >= r.size)
    return invalid_argument(str_printf("%s=%d is out of range [0, %s=%d)", l.rank_var, r.rank,
                                       l.size_var, r.size));
  CHORUS_RETURN_IF_ERROR(check_agreement(env, l, r));

  LaunchInfo info;
  info.launcher = l.name;
  info.rank = r.rank;
  info.size = r.size;
  if (is_set(env, l.local_var)) {
    CHORUS_ASSIGN_OR_RETURN(info.local_rank, read_int(env, l.local_var));
    if (info.local_rank < 0)
      return invalid_argument(str_printf("%s=%d must be >= 0", l.local_var, info.local_rank));
  }
  CHORUS_RETURN_IF_ERROR(read_store(env, l, info));
  for (const char* var : kJobIdVars) {
    if (auto v = env.get(var); v && !v->empty()) {
      info.job_id = *v;
      break;
    }
  }
  CHORUS_LOG(INFO, Boot, "launcher %s: rank %d of %d (local rank %d), store %s:%d%s, job '%s'",
             info.launcher.c_str(), info.rank, info.size, info.local_rank, info.store_host.c_str(),
             info.store_port, info.host_store ? " (hosted here)" : "", info.job_id.c_str());
  return info;
}

}  // namespace chorus::bootstrap
