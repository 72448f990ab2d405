// Communicator::init_from_env under fake launcher environments (chorus-run, torchrun,
// Open MPI, MPICH, Slurm), and the errors for missing or contradicting variables.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "chorus/chorus.h"
#include "rank_runner.h"

namespace chorus {
namespace {

using chorus::testing::check;
using chorus::testing::expect_error;
using chorus::testing::RankRunner;
using chorus::testing::step;
using std::chrono::milliseconds;

constexpr int kRanks = 3;
constexpr auto kInvalid = ErrorCode::kInvalidArgument;

Options quick_options() {
  Options o;
  o.timeout = milliseconds(20000);
  o.connect_timeout = milliseconds(20000);
  return o;
}

void set(const char* name, const std::string& value) { setenv(name, value.c_str(), 1); }

// Rank 0 plays chorus-run: hosts the store on `port` until every rank reported done.
void run_with_launcher_store(int port, int rank, const std::function<void()>& work) {
  std::unique_ptr<TcpStoreServer> server;
  if (rank == 0) server = TcpStoreServer::start("127.0.0.1", port);
  work();
  step("reporting done through the launcher's store");
  auto store = connect_tcp_store("127.0.0.1", port, milliseconds(10000));
  store->add("test/done", 1);
  if (rank != 0) return;
  for (int i = 0; i < 1000 && store->add("test/done", 0) < kRanks; ++i)
    std::this_thread::sleep_for(milliseconds(10));
}

// Every rank: clean environment, set_env(rank), init_from_env, check rank and size, run
// an all_reduce. store_port > 0: rank 0 hosts a TcpStoreServer there (chorus-run).
void expect_launch_works(const std::function<void(int)>& set_env, int store_port = 0) {
  auto body = [&] {
    const int rank = chorus::testing::this_rank().rank;
    chorus::testing::clear_launcher_env();
    set_env(rank);
    auto work = [rank] {
      step("Communicator::init_from_env");
      Communicator comm = Communicator::init_from_env(quick_options());
      check(comm.rank() == rank, "init_from_env gave rank " + std::to_string(comm.rank()) +
                                     ", expected " + std::to_string(rank));
      check(comm.size() == kRanks, "init_from_env gave size " + std::to_string(comm.size()));
      step("all_reduce");
      std::int64_t v = rank + 1, sum = 0;
      comm.all_reduce(&v, &sum, 1, DataType::kInt64, ReduceOp::kSum);
      check(sum == kRanks * (kRanks + 1) / 2, "all_reduce gave " + std::to_string(sum));
      step("barrier before teardown");
      comm.barrier();
    };
    if (store_port > 0) {
      run_with_launcher_store(store_port, rank, work);
    } else {
      work();
    }
  };
  EXPECT_TRUE(chorus::testing::all_ok(RankRunner::run_raw(kRanks, body, milliseconds(60000))));
}

TEST(LaunchEnv, ChorusRun) {
  const int port = chorus::testing::pick_free_port();
  ASSERT_GT(port, 0);
  expect_launch_works(
      [port](int rank) {
        set("CHORUS_RANK", std::to_string(rank));
        set("CHORUS_WORLD_SIZE", std::to_string(kRanks));
        set("CHORUS_LOCAL_RANK", std::to_string(rank));
        set("CHORUS_STORE_ADDR", "127.0.0.1:" + std::to_string(port));
        set("CHORUS_JOB_ID", "launch-env-test");
      },
      port);
}

TEST(LaunchEnv, Torchrun) {
  const int port = chorus::testing::pick_free_port(/*pair=*/true);  // Chorus uses port + 1
  ASSERT_GT(port, 0);
  expect_launch_works([port](int rank) {
    set("RANK", std::to_string(rank));
    set("WORLD_SIZE", std::to_string(kRanks));
    set("LOCAL_RANK", std::to_string(rank));
    set("LOCAL_WORLD_SIZE", std::to_string(kRanks));
    set("MASTER_ADDR", "127.0.0.1");
    set("MASTER_PORT", std::to_string(port));
  });
}

TEST(LaunchEnv, OpenMpi) {
  const int port = chorus::testing::pick_free_port(true);
  ASSERT_GT(port, 0);
  expect_launch_works([port](int rank) {
    set("OMPI_COMM_WORLD_RANK", std::to_string(rank));
    set("OMPI_COMM_WORLD_SIZE", std::to_string(kRanks));
    set("OMPI_COMM_WORLD_LOCAL_RANK", std::to_string(rank));
    set("MASTER_ADDR", "127.0.0.1");
    set("MASTER_PORT", std::to_string(port));
  });
}

TEST(LaunchEnv, Mpich) {
  const int port = chorus::testing::pick_free_port(true);
  ASSERT_GT(port, 0);
  expect_launch_works([port](int rank) {
    set("PMI_RANK", std::to_string(rank));
    set("PMI_SIZE", std::to_string(kRanks));
    set("CHORUS_STORE_ADDR", "127.0.0.1:" + std::to_string(port));
  });
}

TEST(LaunchEnv, Slurm) {
  const int port = chorus::testing::pick_free_port(true);
  ASSERT_GT(port, 0);
  expect_launch_works([port](int rank) {
    set("SLURM_PROCID", std::to_string(rank));
    set("SLURM_NTASKS", std::to_string(kRanks));
    set("SLURM_LOCALID", std::to_string(rank));
    set("SLURM_JOB_ID", "4242");
    set("SLURM_JOB_NODELIST", "localhost");
    set("MASTER_PORT", std::to_string(port));
  });
}

// One process with `vars` set (after clearing the launcher variables) must fail
// init_from_env with kInvalidArgument whose message contains every string in `names`.
void expect_env_rejected(std::vector<std::pair<const char*, std::string>> vars,
                         std::vector<std::string> names) {
  auto body = [&] {
    chorus::testing::clear_launcher_env();
    for (const auto& [k, v] : vars) set(k, v);
    Options o = quick_options();
    o.connect_timeout = milliseconds(3000);
    for (const auto& name : names)
      expect_error(kInvalid, [&] { Communicator::init_from_env(o); }, name);
  };
  EXPECT_TRUE(chorus::testing::all_ok(RankRunner::run_raw(1, body, milliseconds(30000))));
}

TEST(LaunchEnvErrors, NothingSetNamesTheVariables) {
  expect_env_rejected({}, {"CHORUS_RANK", "CHORUS_WORLD_SIZE", "WORLD_SIZE",
                           "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"});
}

TEST(LaunchEnvErrors, RankWithoutWorldSize) {
  expect_env_rejected({{"RANK", "0"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "29500"}},
                      {"WORLD_SIZE"});
}

TEST(LaunchEnvErrors, RankNotBelowWorldSize) {
  expect_env_rejected({{"CHORUS_RANK", "2"}, {"CHORUS_WORLD_SIZE", "2"},
                       {"CHORUS_STORE_ADDR", "127.0.0.1:1"}},
                      {"CHORUS_RANK"});
}

TEST(LaunchEnvErrors, MalformedNumber) {
  expect_env_rejected({{"CHORUS_RANK", "zero"}, {"CHORUS_WORLD_SIZE", "2"},
                       {"CHORUS_STORE_ADDR", "127.0.0.1:1"}},
                      {"CHORUS_RANK"});
}

TEST(LaunchEnvErrors, LaunchersContradictEachOther) {
  expect_env_rejected({{"CHORUS_RANK", "0"}, {"CHORUS_WORLD_SIZE", "2"},
                       {"CHORUS_STORE_ADDR", "127.0.0.1:1"}, {"RANK", "1"}, {"WORLD_SIZE", "2"},
                       {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "29500"}},
                      {"CHORUS_RANK"});
}

TEST(LaunchEnvErrors, WorldSizesContradict) {
  expect_env_rejected({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "4"},
                       {"PMI_RANK", "0"}, {"PMI_SIZE", "2"}, {"MASTER_ADDR", "127.0.0.1"},
                       {"MASTER_PORT", "29500"}},
                      {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"});
}

}  // namespace
}  // namespace chorus
