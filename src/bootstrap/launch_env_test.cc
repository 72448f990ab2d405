// Tests of read_launch_env over fake environments (every launcher, the precedence rules and
// each error), and of the host:port and Slurm node-list parsers.
#include "bootstrap/launch_env.h"

#include <gtest/gtest.h>

#include "bootstrap/launch_address.h"

namespace chorus::bootstrap {
namespace {

using Vars = std::map<std::string, std::string>;

LaunchInfo ok(const Vars& vars) {
  auto r = read_launch_env(config::MapEnvironment(vars));
  EXPECT_TRUE(r) << r.status().to_string();
  return r ? r.value() : LaunchInfo{};
}

// Expects kInvalidArgument whose message contains every string in `needles`.
void fails(const Vars& vars, std::initializer_list<const char*> needles) {
  auto r = read_launch_env(config::MapEnvironment(vars));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  for (const char* n : needles)
    EXPECT_NE(r.status().message().find(n), std::string::npos)
        << "'" << n << "' not in: " << r.status().message();
}

TEST(LaunchEnv, NothingFoundListsEveryLauncher) {
  fails({{"HOME", "/root"}}, {"CHORUS_RANK", "CHORUS_WORLD_SIZE", "RANK/WORLD_SIZE", "MASTER_ADDR",
                              "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMI_SIZE", "SLURM_PROCID",
                              "SLURM_NTASKS"});
}

TEST(LaunchEnv, ChorusRun) {
  LaunchInfo i = ok({{"CHORUS_RANK", "1"}, {"CHORUS_WORLD_SIZE", "4"}, {"CHORUS_LOCAL_RANK", "1"},
                     {"CHORUS_STORE_ADDR", "host1:4000"}, {"CHORUS_JOB_ID", "job7"},
                     {"SLURM_JOB_ID", "99"}});
  EXPECT_EQ(i.launcher, "chorus-run");
  EXPECT_EQ(i.rank, 1);
  EXPECT_EQ(i.size, 4);
  EXPECT_EQ(i.local_rank, 1);
  EXPECT_EQ(i.store_host, "host1");
  EXPECT_EQ(i.store_port, 4000);
  EXPECT_FALSE(i.host_store);
  EXPECT_EQ(i.job_id, "job7");
  LaunchInfo r0 = ok({{"CHORUS_RANK", "0"}, {"CHORUS_WORLD_SIZE", "1"}, {"CHORUS_STORE_ADDR", "[::1]:5"}});
  EXPECT_FALSE(r0.host_store);  // chorus-run hosts the server itself
  EXPECT_EQ(r0.store_host, "::1");
  EXPECT_EQ(r0.local_rank, -1);
  EXPECT_EQ(r0.job_id, "");
}

TEST(LaunchEnv, ChorusRunIncomplete) {
  fails({{"CHORUS_RANK", "0"}}, {"CHORUS_WORLD_SIZE"});
  fails({{"CHORUS_WORLD_SIZE", "2"}, {"RANK", "0"}, {"WORLD_SIZE", "2"}}, {"CHORUS_RANK"});
  fails({{"CHORUS_RANK", "0"}, {"CHORUS_WORLD_SIZE", "2"}}, {"CHORUS_STORE_ADDR"});
  fails({{"CHORUS_RANK", "0"}, {"CHORUS_WORLD_SIZE", "2"}, {"CHORUS_STORE_ADDR", "nohost"}},
        {"CHORUS_STORE_ADDR", "nohost"});
  fails({{"CHORUS_RANK", "0"}, {"CHORUS_WORLD_SIZE", "2"}, {"CHORUS_STORE_ADDR", "h:0"}}, {"h:0"});
  fails({{"CHORUS_RANK", "0"}, {"CHORUS_WORLD_SIZE", "2"}, {"CHORUS_STORE_ADDR", ":80"}}, {"empty host"});
  fails({{"CHORUS_RANK", "0"}, {"CHORUS_WORLD_SIZE", "2"}, {"CHORUS_STORE_ADDR", "h:1"},
         {"CHORUS_LOCAL_RANK", "x"}}, {"CHORUS_LOCAL_RANK", "'x'"});
}

TEST(LaunchEnv, Torchrun) {
  Vars v = {{"RANK", "0"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "0"}, {"MASTER_ADDR", "10.0.0.1"},
            {"MASTER_PORT", "29500"}, {"TORCHELASTIC_RUN_ID", "run1"}};
  LaunchInfo i = ok(v);
  EXPECT_EQ(i.launcher, "torchrun");
  EXPECT_EQ(i.store_host, "10.0.0.1");
  EXPECT_EQ(i.store_port, 29501);  // torchrun's own store holds MASTER_PORT
  EXPECT_TRUE(i.host_store);
  EXPECT_EQ(i.local_rank, 0);
  EXPECT_EQ(i.job_id, "run1");
  v["RANK"] = "3";
  v["LOCAL_RANK"] = "3";
  EXPECT_FALSE(ok(v).host_store);
  v["RANK"] = "0";
  v["CHORUS_STORE_ADDR"] = "store:7000";
  LaunchInfo o = ok(v);
  EXPECT_EQ(o.store_host, "store");
  EXPECT_EQ(o.store_port, 7000);
  EXPECT_FALSE(o.host_store);
}

TEST(LaunchEnv, TorchrunIncomplete) {
  fails({{"RANK", "0"}}, {"WORLD_SIZE"});
  fails({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "1"}}, {"MASTER_ADDR"});
  fails({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}}, {"MASTER_PORT"});
  fails({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "65535"}},
        {"MASTER_PORT=65535"});
  fails({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "p"}},
        {"MASTER_PORT", "'p'"});
}

TEST(LaunchEnv, BadNumbers) {
  fails({{"RANK", "abc"}, {"WORLD_SIZE", "2"}}, {"RANK='abc'", "not an integer"});
  fails({{"RANK", "0"}, {"WORLD_SIZE", "2x"}}, {"WORLD_SIZE='2x'"});
  fails({{"RANK", "99999999999"}, {"WORLD_SIZE", "2"}}, {"RANK"});
  fails({{"RANK", "4"}, {"WORLD_SIZE", "4"}}, {"RANK=4", "WORLD_SIZE=4"});
  fails({{"RANK", "-1"}, {"WORLD_SIZE", "4"}}, {"RANK=-1"});
  fails({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "0"}}, {"OMPI_COMM_WORLD_SIZE=0", ">= 1"});
}

TEST(LaunchEnv, OpenMpi) {
  Vars v = {{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "2"},
            {"OMPI_COMM_WORLD_LOCAL_RANK", "0"}, {"OMPI_MCA_ess_base_jobid", "1234"}};
  fails(v, {"Open MPI", "MASTER_ADDR", "MASTER_PORT", "CHORUS_STORE_ADDR"});
  v["CHORUS_STORE_ADDR"] = "head:6000";
  LaunchInfo i = ok(v);
  EXPECT_EQ(i.launcher, "openmpi");
  EXPECT_TRUE(i.host_store);  // nobody else started a server under mpirun
  EXPECT_EQ(i.store_host, "head");
  EXPECT_EQ(i.store_port, 6000);
  EXPECT_EQ(i.job_id, "1234");
  v["OMPI_COMM_WORLD_RANK"] = "1";
  v["OMPI_COMM_WORLD_LOCAL_RANK"] = "1";
  EXPECT_FALSE(ok(v).host_store);
  v.erase("CHORUS_STORE_ADDR");
  v["MASTER_ADDR"] = "head2";
  v["MASTER_PORT"] = "7000";
  LaunchInfo m = ok(v);
  EXPECT_EQ(m.store_host, "head2");
  EXPECT_EQ(m.store_port, 7000);  // no torchrun store: MASTER_PORT itself
  EXPECT_EQ(m.local_rank, 1);
  v.erase("MASTER_PORT");
  EXPECT_EQ(ok(v).store_port, 29500);
}

TEST(LaunchEnv, Mpich) {
  LaunchInfo i = ok({{"PMI_RANK", "2"}, {"PMI_SIZE", "3"}, {"MPI_LOCALRANKID", "0"},
                     {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1000"}});
  EXPECT_EQ(i.launcher, "mpich");
  EXPECT_EQ(i.rank, 2);
  EXPECT_EQ(i.local_rank, 0);
  EXPECT_FALSE(i.host_store);
  EXPECT_EQ(ok({{"PMI_RANK", "0"}, {"PMI_SIZE", "3"}, {"MASTER_ADDR", "h"}}).local_rank, -1);
  fails({{"PMI_SIZE", "3"}}, {"PMI_SIZE is set", "PMI_RANK is not"});
}

TEST(LaunchEnv, Slurm) {
  Vars v = {{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "8"}, {"SLURM_LOCALID", "0"},
            {"SLURM_JOB_NODELIST", "node[01-04,07],gpu5"}, {"SLURM_JOB_ID", "555"}};
  LaunchInfo i = ok(v);
  EXPECT_EQ(i.launcher, "slurm");
  EXPECT_EQ(i.store_host, "node01");
  EXPECT_EQ(i.store_port, 29500);
  EXPECT_TRUE(i.host_store);
  EXPECT_EQ(i.job_id, "555");
  v["MASTER_PORT"] = "4321";
  EXPECT_EQ(ok(v).store_port, 4321);
  v["MASTER_ADDR"] = "explicit";
  EXPECT_EQ(ok(v).store_host, "explicit");
  v.erase("MASTER_ADDR");
  v.erase("SLURM_JOB_NODELIST");
  v["SLURM_NODELIST"] = "gpu7";
  EXPECT_EQ(ok(v).store_host, "gpu7");
  v["SLURM_NODELIST"] = "bad]";
  fails(v, {"SLURM_NODELIST"});
  v.erase("SLURM_NODELIST");
  fails(v, {"Slurm", "MASTER_ADDR", "CHORUS_STORE_ADDR"});
  fails({{"SLURM_PROCID", "0"}}, {"SLURM_NTASKS"});
}

TEST(LaunchEnv, LaunchersThatDisagreeAreNamed) {
  fails({{"RANK", "1"}, {"WORLD_SIZE", "4"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"},
         {"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "4"}},
        {"RANK=1", "WORLD_SIZE=4", "OMPI_COMM_WORLD_RANK=2", "OMPI_COMM_WORLD_SIZE=4"});
  fails({{"CHORUS_RANK", "0"}, {"CHORUS_WORLD_SIZE", "2"}, {"CHORUS_STORE_ADDR", "h:1"},
         {"PMI_RANK", "0"}, {"PMI_SIZE", "3"}},
        {"CHORUS_WORLD_SIZE=2", "PMI_SIZE=3"});
  // Agreeing launchers are fine.
  EXPECT_EQ(ok({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}, {"PMI_RANK", "1"},
                {"PMI_SIZE", "2"}, {"MASTER_ADDR", "h"}}).launcher, "openmpi");
}

TEST(LaunchEnv, SlurmAroundAnotherLauncherIsNotAContradiction) {
  // srun starting one torchrun per node: Slurm describes the nodes, torchrun the ranks.
  LaunchInfo i = ok({{"RANK", "5"}, {"WORLD_SIZE", "16"}, {"MASTER_ADDR", "n1"}, {"MASTER_PORT", "29500"},
                     {"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}, {"SLURM_JOB_ID", "77"}});
  EXPECT_EQ(i.launcher, "torchrun");
  EXPECT_EQ(i.rank, 5);
  EXPECT_EQ(i.job_id, "77");
  // mpirun inside an sbatch allocation, with only some Slurm variables set.
  EXPECT_EQ(ok({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "4"}, {"SLURM_NTASKS", "1"},
                {"SLURM_JOB_NODELIST", "a[1-2]"}, {"MASTER_ADDR", "a1"}}).rank, 3);
}

TEST(LaunchAddress, HostPort) {
  auto hp = parse_host_port("V", "example.com:80");
  ASSERT_TRUE(hp);
  EXPECT_EQ(hp->host, "example.com");
  EXPECT_EQ(hp->port, 80);
  auto v6 = parse_host_port("V", "[fe80::1]:65535");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->host, "fe80::1");
  EXPECT_EQ(v6->port, 65535);
  for (const char* bad : {"", "h", "h:", "h:65536", "h:-1", "::1:80", "[::1]80", "[::1]:", "[]:80"}) {
    auto r = parse_host_port("V", bad);
    EXPECT_FALSE(r) << bad;
    if (!r) {
      EXPECT_NE(r.status().message().find("V="), std::string::npos);
    }
  }
}

TEST(LaunchAddress, SlurmFirstHost) {
  EXPECT_EQ(slurm_first_host("node[01-04,07],gpu5"), "node01");
  EXPECT_EQ(slurm_first_host("gpu5,node[01-04]"), "gpu5");
  EXPECT_EQ(slurm_first_host("node[7,3-4]"), "node7");
  EXPECT_EQ(slurm_first_host("rack[1-2]-n[3,5]"), "rack1-n3");
  EXPECT_EQ(slurm_first_host("single"), "single");
  EXPECT_EQ(slurm_first_host(""), "");
  EXPECT_EQ(slurm_first_host("node[01-04"), "");
  EXPECT_EQ(slurm_first_host("node[]"), "");
}

}  // namespace
}  // namespace chorus::bootstrap
