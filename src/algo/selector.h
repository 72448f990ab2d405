// Chooses an algorithm per collective from size and rank count, unless overridden.
#pragma once
#include <cstddef>
#include <string>

#include "algo/algorithm.h"

namespace chorus::algo {

enum class CollKind : int {
  kAllReduce = 0, kReduce, kBroadcast, kAllGather, kReduceScatter, kAllToAll, kAllToAllV,
  kGather, kScatter, kBarrier, kSend, kRecv,
};
const char* to_string(CollKind k);

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
  std::string override_spec;           // CHORUS_ALGO syntax: "ring" or "all_reduce:rhd,broadcast:tree"
  // Processors of the host (the same on every rank of it; 0 = unknown, taken as many).
  // Single-copy reads spend the reader's CPU in the kernel: some collectives use them
  // only while the ranks do not outnumber the processors.
  int host_cpus = 0;
};

class Selector {
 public:
  // kInvalidArgument naming CHORUS_ALGO when the spec names an unknown collective or
  // algorithm.
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
  SelectorConfig cfg_;
  const char* forced_[12] = {};  // per CollKind, nullptr = automatic
};

}  // namespace chorus::algo
