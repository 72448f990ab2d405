// chorus-run: launches N ranks of a program on this host around an in-process TCP store.
//
//   chorus-run -n N [--tag-output | --no-tag-output] [--timeout S] [--host H] prog args...
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

#include "chorus/status.h"
#include "chorus/store.h"
#include "child_env.h"
#include "signals.h"
#include "spawn.h"
#include "supervisor.h"

namespace {

struct RunOptions {
  int ranks = 0;
  bool tag_output = true;
  double timeout_s = 0;
  std::string host = "127.0.0.1";
  std::vector<std::string> command;
};

constexpr int kUsageError = 2;

// Parses the command line; returns -1 to go on, else the exit code.
int parse_args(int argc, char** argv, RunOptions* o) {
  CLI::App app{"Launch N ranks of a Chorus program on this host."};
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
  app.prefix_command();
  app.footer(
      "Everything from the first non-option argument on is the program and its arguments.\n"
      "Ranks read stdin from /dev/null. Exit status: 0 when every rank exits 0; else the\n"
      "first failing rank's status (128 + signal if killed), 124 on --timeout, 2 on\n"
      "usage errors.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kUsageError;
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
void launch_ranks(const RunOptions& o, const chorus_run::JobEnv& job, const sigset_t& mask,
                  chorus_run::Supervisor* supervisor) {
  for (int rank = 0; rank < o.ranks; ++rank) {
    chorus_run::SpawnSpec spec;
    spec.argv = o.command;
    spec.env = chorus_run::child_environment(environ, job, rank);
    spec.capture_output = o.tag_output;
    spec.child_mask = mask;
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
  launch_ranks(o, job, old_mask, &supervisor);
  return supervisor.run();
}
