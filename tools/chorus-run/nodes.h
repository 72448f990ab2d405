// Multi-node launches (torchrun style): the agents of one job agree through the store on
// the job id, the number of nodes and each node's rank count, and so on global ranks.
#pragma once
#include <string>
#include <vector>

#include "chorus/store.h"

namespace chorus_run {

struct NodeSpec {
  int nnodes = 1;
  int node_rank = 0;
  int local_ranks = 1;      // this node's -n
  double join_timeout_s = 60;
  std::string job_id;       // node 0's proposal (make_job_id()); others adopt node 0's
};

// What every agent of the job agreed on.
struct NodePlan {
  std::vector<int> counts;  // ranks per node, by node rank
  int first_rank = 0;       // this node's first global rank: sum of counts of nodes before it
  int world_size = 0;
  std::string job_id;
};

// Claims `spec.node_rank`, publishes this node's count (node 0 also the job id and node
// count), and waits up to `spec.join_timeout_s` for every node. Returns false with
// `*error` set on a duplicate node rank, a node-count mismatch, missing nodes or a store
// error.
bool agree_on_nodes(chorus::Store& store, const NodeSpec& spec, NodePlan* plan,
                    std::string* error);

// Splits "host:port" (port 1..65535, "[v6]:port" accepted). False when malformed.
bool split_host_port(const std::string& text, std::string* host, int* port);

}  // namespace chorus_run
