// One node's agent of a multi-node chorus-run: hosts (node 0) or joins the store, agrees
// with the other agents on global ranks, supervises this node's ranks, and stops them when
// another node fails.
#pragma once
#include <functional>
#include <string>

#include "child_env.h"
#include "nodes.h"
#include "supervisor.h"

namespace chorus_run {

struct AgentOptions {
  NodeSpec spec;
  std::string master_host;  // --master HOST:PORT: the store every rank and agent uses
  int master_port = 0;
  double timeout_s = 0;     // --timeout (0 = none)
};

// Starts this node's ranks: `first_rank` is the global rank of local rank 0.
using LaunchFn = std::function<void(const JobEnv& job, int first_rank, Supervisor* supervisor)>;

// Runs the node's part of the job; returns chorus-run's exit code: 0 when every rank of
// every node exited 0; a local rank's status when one failed here; 1 when another node
// failed or the store was lost; 124 on --timeout; 128 + signal when interrupted.
int run_node_agent(const AgentOptions& o, int signal_fd, const LaunchFn& launch);

}  // namespace chorus_run
