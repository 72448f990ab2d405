// The node agreement of a multi-node chorus-run (see nodes.h). Keys live under
// "chorus-run/" in the job's store, which node 0's agent hosts.
#include "nodes.h"

#include <chrono>
#include <cstdio>
#include <exception>

#include "chorus/status.h"

namespace chorus_run {
namespace {

const std::string kJobKey = "chorus-run/job";  // "job id\nnnodes", set by node 0

std::string count_key(int node) { return "chorus-run/node/" + std::to_string(node) + "/count"; }

std::vector<std::uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }
std::string text(const std::vector<std::uint8_t>& b) { return {b.begin(), b.end()}; }

// "nodes 1, 3" for the nodes whose count is not in the store yet.
std::string missing_nodes(chorus::Store& store, int nnodes) {
  std::string out;
  for (int k = 0; k < nnodes; ++k)
    if (!store.check(count_key(k))) out += (out.empty() ? "" : ", ") + std::to_string(k);
  return out.empty() ? "none" : out;
}

bool agree(chorus::Store& store, const NodeSpec& spec, NodePlan* plan, std::string* error) {
  const auto timeout = std::chrono::milliseconds(static_cast<long long>(spec.join_timeout_s * 1000));
  const std::string me = std::to_string(spec.node_rank);
  if (store.add("chorus-run/node/" + me + "/claimed", 1) != 1) {
    *error = "node rank " + me + " is already taken (two agents started with --node-rank " + me + "?)";
    return false;
  }
  if (spec.node_rank == 0) {
    plan->job_id = spec.job_id;
    store.set(kJobKey, bytes(spec.job_id + "\n" + std::to_string(spec.nnodes)));
  } else {
    std::string v = text(store.get(kJobKey, timeout));
    std::size_t nl = v.find('\n');
    plan->job_id = v.substr(0, nl);
    std::string theirs = nl == std::string::npos ? "" : v.substr(nl + 1);
    if (theirs != std::to_string(spec.nnodes)) {
      *error = "node 0 runs with --nnodes " + theirs + ", this node with --nnodes " +
               std::to_string(spec.nnodes);
      return false;
    }
  }
  store.set(count_key(spec.node_rank), bytes(std::to_string(spec.local_ranks)));
  std::vector<std::string> keys;
  for (int k = 0; k < spec.nnodes; ++k) keys.push_back(count_key(k));
  try {
    store.wait(keys, timeout);
  } catch (const chorus::Error& e) {
    if (e.code() != chorus::ErrorCode::kTimeout) throw;
    char secs[32];
    std::snprintf(secs, sizeof(secs), "%g", spec.join_timeout_s);
    *error = std::string("not every node joined within ") + secs + " s (--join-timeout); missing: nodes " +
             missing_nodes(store, spec.nnodes);
    return false;
  }
  plan->counts.clear();
  plan->world_size = 0;
  for (int k = 0; k < spec.nnodes; ++k) {
    int n = std::stoi(text(store.get(keys[k], timeout)));
    if (k == spec.node_rank) plan->first_rank = plan->world_size;
    plan->counts.push_back(n);
    plan->world_size += n;
  }
  return true;
}

}  // namespace

bool agree_on_nodes(chorus::Store& store, const NodeSpec& spec, NodePlan* plan,
                    std::string* error) {
  try {
    return agree(store, spec, plan, error);
  } catch (const std::exception& e) {
    *error = std::string("store error while the nodes met: ") + e.what();
    return false;
  }
}

bool split_host_port(const std::string& text, std::string* host, int* port) {
  std::size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) return false;
  std::string h = text.substr(0, colon);
  if (h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  std::string p = text.substr(colon + 1);
  if (h.empty() || p.size() > 5 || p.find_first_not_of("0123456789") != std::string::npos)
    return false;
  int v = std::stoi(p);
  if (v < 1 || v > 65535) return false;
  *host = h;
  *port = v;
  return true;
}

}  // namespace chorus_run
