// chorus-run: launches N ranks of a program on this host around an in-process TCP store,
// or (torchrun style) this node's ranks of a job over several nodes.
//
//   chorus-run -n N [--tag-output | --no-tag-output] [--timeout S] [--host H]
//              [--bind none|core|cpu] prog args...
//   chorus-run --nnodes M --node-rank K --master HOST:PORT -n N [...] prog args...
//
// Each rank gets CHORUS_RANK, CHORUS_WORLD_SIZE, CHORUS_LOCAL_RANK, CHORUS_STORE_ADDR
// and CHORUS_JOB_ID; variables of other launchers (RANK, OMPI_*, PMI_*, SLURM_*, ...)
// are removed. Ranks run in their own process groups and die with chorus-run.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "binding.h"
#include "chorus/status.h"
#include "chorus/store.h"
#include "child_env.h"
#include "node_agent.h"
#include "signals.h"
#include "spawn.h"
#include "supervisor.h"

namespace {

struct RunOptions {
  int ranks = 0;
  bool tag_output = true;
  double timeout_s = 0;
  std::string host = "127.0.0.1";
  std::string bind = "none";
  std::vector<cpu_set_t> bind_units;  // --bind: local rank i runs on unit i % size
  std::vector<std::string> command;
  // Multi-node (nnodes > 0).
  int nnodes = 0;
  int node_rank = -1;
  std::string master;
  double join_timeout_s = 60;
};

constexpr int kUsageError = 2;

// What is wrong with the multi-node options as given ("" when nothing).
std::string node_options_problem(const CLI::App& app, const RunOptions& o) {
  if (app.count("--nnodes") + app.count("--node-rank") + app.count("--master") == 0) return "";
  if (o.nnodes == 0 || o.node_rank < 0 || o.master.empty())
    return "--nnodes, --node-rank and --master go together";
  if (o.node_rank >= o.nnodes)
    return "--node-rank " + std::to_string(o.node_rank) + " is not below --nnodes " +
           std::to_string(o.nnodes);
  if (app.count("--host") > 0)
    return "--host does not apply with --nnodes (ranks reach the store at --master)";
  return "";
}

// Parses the command line; returns -1 to go on, else the exit code.
int parse_args(int argc, char** argv, RunOptions* o) {
  CLI::App app{
      "Launch N ranks of a Chorus program on this host, or (--nnodes) this node's ranks of a "
      "job over several machines."};
  app.add_option("-n,--np", o->ranks, "Number of ranks to start")
      ->required()
      ->check(CLI::Range(1, 65536));
  app.add_flag("--tag-output,!--no-tag-output", o->tag_output,
               "Prefix every line of a rank's stdout/stderr with \"[rank] \" (default: on)");
  app.add_option("--timeout", o->timeout_s,
                 "Kill all ranks and exit 124 after this many seconds (0 = never)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--host", o->host,
                 "Address ranks use to reach the store (CHORUS_STORE_ADDR host)")
      ->capture_default_str();
  app.add_option("--bind", o->bind,
                 "Where each rank runs: none (every rank may use chorus-run's affinity "
                 "mask), core (local rank i on the i-th core of that mask, wrapping around), "
                 "cpu (on its i-th processor)")
      ->check(CLI::IsMember({"none", "core", "cpu"}))
      ->capture_default_str();
  app.add_option("--nnodes", o->nnodes,
                 "Number of nodes (machines) in the job; run chorus-run once on each, with "
                 "the same --nnodes and --master")
      ->check(CLI::Range(1, 65536));
  app.add_option("--node-rank", o->node_rank,
                 "This node's index in [0, nnodes); node 0 hosts the store. Global ranks "
                 "are numbered by node")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--master", o->master,
                 "HOST:PORT of the store: node 0 listens on PORT (all interfaces), every "
                 "node and rank connects to HOST:PORT (CHORUS_STORE_ADDR)");
  app.add_option("--join-timeout", o->join_timeout_s,
                 "Multi-node: seconds to wait for the store and for every node to join")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.prefix_command();
  app.footer(
      "Everything from the first non-option argument on is the program and its arguments.\n"
      "Ranks read stdin from /dev/null. Exit status: 0 when every rank exits 0; else the\n"
      "first failing rank's status (128 + signal if killed), 124 on --timeout, 2 on\n"
      "usage errors. Multi-node: -n is this node's rank count (it may differ per node);\n"
      "a failure on one node stops every node, whose chorus-run exits 1 naming it;\n"
      "--bind applies on each node to its own ranks, within its chorus-run's mask.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kUsageError;
  }
  if (std::string problem = node_options_problem(app, *o); !problem.empty()) {
    std::cerr << problem << "\nRun with --help for more information.\n";
    return kUsageError;
  }
  chorus_run::Bind bind = chorus_run::Bind::kNone;
  chorus_run::parse_bind(o->bind, &bind);
  if (bind != chorus_run::Bind::kNone) {
    cpu_set_t mask;
    if (sched_getaffinity(0, sizeof mask, &mask) == 0)
      o->bind_units = chorus_run::bind_units(bind, mask);
    if (o->bind_units.empty()) {
      std::cerr << "chorus-run: --bind " << o->bind
                << ": cannot read this process's affinity mask\n";
      return 1;
    }
  }
  o->command = app.remaining();
  if (!o->command.empty() && o->command[0] == "--") o->command.erase(o->command.begin());
  if (o->command.empty() || o->command[0].starts_with("-")) {
    std::cerr << (o->command.empty() ? std::string("A program to run is required")
                                     : "Unknown option: " + o->command[0])
              << "\nRun with --help for more information.\n";
    return kUsageError;
  }
  return -1;
}

// Starts every rank under `supervisor`; on a failed start stops those already started.
// `first_rank` is the global rank of local rank 0 (0 on one node).
void launch_ranks(const RunOptions& o, const chorus_run::JobEnv& job, int first_rank,
                  const sigset_t& mask, chorus_run::Supervisor* supervisor) {
  for (int local = 0; local < o.ranks; ++local) {
    const int rank = first_rank + local;
    chorus_run::SpawnSpec spec;
    spec.argv = o.command;
    spec.env = chorus_run::child_environment(environ, job, rank, local);
    spec.capture_output = o.tag_output;
    spec.child_mask = mask;
    if (!o.bind_units.empty()) {
      spec.bind = true;
      spec.cpus = chorus_run::unit_of_rank(o.bind_units, local);
    }
    chorus_run::SpawnedRank child;
    std::string error;
    if (!chorus_run::spawn_rank(spec, &child, &error)) {
      std::cerr << "chorus-run: rank " << rank << ": " << error << "\n";
      supervisor->terminate_all(127);
      return;
    }
    supervisor->add_rank(rank, child.pid, child.out_fd, child.err_fd);
  }
}

int run_nodes(const RunOptions& o, int signal_fd, const sigset_t& old_mask) {
  chorus_run::AgentOptions agent;
  if (!chorus_run::split_host_port(o.master, &agent.master_host, &agent.master_port)) {
    std::cerr << "--master '" << o.master << "' is not HOST:PORT (port 1..65535)\n";
    return kUsageError;
  }
  agent.spec = {o.nnodes, o.node_rank, o.ranks, o.join_timeout_s, chorus_run::make_job_id()};
  agent.timeout_s = o.timeout_s;
  return chorus_run::run_node_agent(
      agent, signal_fd,
      [&](const chorus_run::JobEnv& job, int first_rank, chorus_run::Supervisor* supervisor) {
        launch_ranks(o, job, first_rank, old_mask, supervisor);
      });
}

}  // namespace

int main(int argc, char** argv) {
  RunOptions o;
  if (int rc = parse_args(argc, argv, &o); rc >= 0) return rc;

  sigset_t old_mask;
  int signal_fd = chorus_run::block_and_open_signalfd(&old_mask);  // before any thread
  if (signal_fd < 0) {
    perror("chorus-run: signalfd");
    return 1;
  }
  if (o.nnodes > 0) return run_nodes(o, signal_fd, old_mask);
  std::unique_ptr<chorus::TcpStoreServer> server;
  try {
    bool loopback = o.host == "127.0.0.1" || o.host == "localhost";
    server = chorus::TcpStoreServer::start(loopback ? "127.0.0.1" : "0.0.0.0", 0);
  } catch (const chorus::Error& e) {
    std::cerr << "chorus-run: cannot start the store server: " << e.what() << "\n";
    return 1;
  }
  chorus_run::JobEnv job{o.ranks, o.host + ":" + std::to_string(server->port()),
                         chorus_run::make_job_id()};
  chorus_run::Supervisor supervisor(signal_fd, o.timeout_s);
  launch_ranks(o, job, 0, old_mask, &supervisor);
  return supervisor.run();
}
