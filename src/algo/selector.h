// Maps an operation kind (op/kind.h) to an algorithm, from size, rank count and the
// transport's capabilities, unless overridden (CHORUS_ALGO, tuning table, cost model).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "algo/algorithm.h"
#include "algo/cost_model.h"

namespace chorus::algo {

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
  // all_reduce <= this: latency algorithms (the table's CHORUS_SMALL_MSG_SIZE by default)
  std::size_t small_bytes = CollArgs{}.small_bytes;
  // CHORUS_ALGO syntax: "ring", "all_reduce:rhd,broadcast:tree", with optional size ranges
  // "all_reduce:shm@0-64K,single_copy@64K-" (docs/ALGORITHMS.md, "Overriding").
  std::string override_spec;
  // The host's cost-model parameters, agreed by every rank (core/tuning.cc).
  CostParams cost{};
  // CHORUS_COST_MODEL: which collectives the model chooses for on one host (with shared
  // windows, or over TCP alone once the probe measured it): "auto" (per medium, those
  // where a sweep showed it at least as good as the rules, docs/ALGORITHMS.md), "all",
  // "none", or a comma-separated list of collectives (then for both media).
  std::string model_spec{};  // "" = auto, the table's default
  // The tuning table (chorus-tune --write, CHORUS_TUNING_TABLE): ahead of the model.
  struct TableRow {
    std::string kind;  // collective name, e.g. "all_reduce"
    int nranks = 0;    // applies to communicators of exactly this size
    std::uint64_t lo = 0, hi = UINT64_MAX;  // lo <= bytes < hi
    std::string algo;
  };
  std::vector<TableRow> table{};
};

// What the selector would run for one collective, and why (Selector::estimate).
struct Estimate {
  Choice choice;
  double predicted_us = -1;       // the model's time of choice (-1: no formula)
  const char* source = "rules";   // "override" (CHORUS_ALGO), "table", "model", "rules"
  const char* rule_algo = "";     // what the built-in rules alone would run
  const char* model_algo = "";    // the model's least-time algorithm ("" when none)
  // Every algorithm of the collective this transport can run, with its predicted time.
  std::vector<std::pair<const char*, double>> candidates;
};

// Bit k: the cost model chooses for CollKind k, with shared windows / over messages alone.
struct ModelKinds {
  unsigned windows = 0;
  unsigned messages = 0;
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

  // The choice with its reasons and every candidate's predicted time (allocates: not
  // for the data path). Same choice as choose().
  Estimate estimate(CollKind kind, std::size_t bytes, int nranks, const Capabilities& caps) const;

 private:
  // An override: `name` for messages of [lo, hi) bytes (and a table row: for `nranks`).
  struct Rule {
    std::uint64_t lo = 0;
    std::uint64_t hi = UINT64_MAX;
    const char* name = nullptr;
    int nranks = 0;
  };
  // The forced algorithm for (kind, bytes), or null (automatic).
  const char* forced(int kind, std::size_t bytes) const;
  // The tuning table's algorithm for (kind, bytes, nranks), or null.
  const char* tabled(int kind, std::size_t bytes, int nranks) const;
  // The model's least-time algorithm, or null when the model does not choose here.
  const char* modelled(CollKind kind, std::size_t bytes, int nranks, const Capabilities& caps,
                       double* best_us = nullptr) const;
  // The built-in rules (no override, no table, no model).
  Choice rules(CollKind kind, std::size_t bytes, int nranks, const Capabilities& caps) const;
  // Adds `algo` (with its "@lo-hi" range, if any) to collective `kind`'s rules.
  static Status add_rule(Selector& sel, const std::string& spec, int kind,
                         std::string_view algo);
  // Adds cfg_.table's rows to table_ (kInvalidArgument for an unknown name or empty range).
  static Status add_table(Selector& sel);

  SelectorConfig cfg_;
  std::vector<Rule> rules_[op::kNumKinds];  // per CollKind; none = automatic
  std::vector<Rule> table_[op::kNumKinds];  // per CollKind, from cfg_.table
  ModelKinds model_kinds_;  // bit k: the model chooses for CollKind k
};

}  // namespace chorus::algo
