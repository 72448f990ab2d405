// Chooses an algorithm per collective from size and rank count, unless overridden.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "algo/algorithm.h"

namespace chorus::algo {

enum class CollKind : int {
  kAllReduce = 0, kReduce, kBroadcast, kAllGather, kReduceScatter, kAllToAll, kAllToAllV,
  kGather, kScatter, kBarrier, kSend, kRecv,
};
const char* to_string(CollKind k);
// The collectives that combine with a ReduceOp, and those that have a root.
inline bool takes_reduce_op(CollKind k) {
  return k == CollKind::kAllReduce || k == CollKind::kReduce || k == CollKind::kReduceScatter;
}
inline bool takes_root(CollKind k) {
  return k == CollKind::kReduce || k == CollKind::kBroadcast || k == CollKind::kGather ||
         k == CollKind::kScatter;
}

struct Choice {
  const char* name;  // e.g. "ring"
  CollFn fn;
  // The algorithm works in the transport's shared windows (one set per communicator):
  // such operations must run one at a time, in sequence order, on every rank.
  bool uses_windows = false;
};

// What a communicator's transport offers, fixed when the communicator is built and
// handed to every choice (core computes it once).
struct Capabilities {
  bool windows = false;      // shared windows (Transport::shared_windows())
  bool single_copy = false;  // ... with single-copy reads of peers (SharedWindows::single_copy())
  bool spans_hosts = false;  // ranks on several hosts (Transport::hosts())
  bool uniform_hosts = false;  // ... with as many ranks on every host
  // ... and this rank's host shares windows (Transport::group_windows of its ranks): the
  // hierarchical algorithms' phases within the host go through them.
  bool host_windows = false;
};
// Reads them off a transport.
Capabilities capabilities_of(transport::Transport& t);

struct SelectorConfig {
  std::size_t small_bytes = 64 << 10;  // all_reduce <= this: latency algorithms
  // CHORUS_ALGO syntax: "ring", "all_reduce:rhd,broadcast:tree", with optional size ranges
  // "all_reduce:shm@0-64K,single_copy@64K-" (docs/ALGORITHMS.md, "Overriding").
  std::string override_spec;
  // Processors of the host (the same on every rank of it; 0 = unknown, taken as many).
  // Single-copy reads spend the reader's CPU in the kernel: some collectives use them
  // only while the ranks do not outnumber the processors.
  int host_cpus = 0;
};

class Selector {
 public:
  // kInvalidArgument naming CHORUS_ALGO when the spec names an unknown collective or
  // algorithm, or a size range that is malformed, empty or overlaps another of its
  // collective.
  static Result<Selector> create(const SelectorConfig& cfg);
  // `bytes` = count * dtype size as in CollArgs. Never fails for kinds other than
  // kSend/kRecv (which have no algorithm).
  // `has_windows`: the transport offers shared windows (Transport::shared_windows());
  // `single_copy`: and single-copy reads of peers (SharedWindows::single_copy()).
  Choice choose(CollKind kind, std::size_t bytes, int nranks, const Capabilities& caps) const;
  Choice choose(CollKind kind, std::size_t bytes, int nranks, bool has_windows = false,
                bool single_copy = false) const {
    return choose(kind, bytes, nranks, Capabilities{has_windows, single_copy});
  }

 private:
  // An override: `name` for messages of [lo, hi) bytes.
  struct Rule {
    std::uint64_t lo = 0;
    std::uint64_t hi = UINT64_MAX;
    const char* name = nullptr;
  };
  // The forced algorithm for (kind, bytes), or null (automatic).
  const char* forced(int kind, std::size_t bytes) const;
  // Adds `algo` (with its "@lo-hi" range, if any) to collective `kind`'s rules.
  static Status add_rule(Selector& sel, const std::string& spec, int kind,
                         std::string_view algo);

  SelectorConfig cfg_;
  std::vector<Rule> rules_[12];  // per CollKind; none = automatic
};

}  // namespace chorus::algo
