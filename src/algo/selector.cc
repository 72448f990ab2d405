// Selector: the automatic algorithm choice per operation kind (the built-in rules, the
// cost model's least time, or an override: selector_spec.cc) and its estimate.
#include "algo/selector.h"

#include <optional>
#include <string_view>

#include "algo/hier_layout.h"
#include "algo/patterns.h"
#include "algo/selector_table.h"

namespace chorus::algo {

Capabilities capabilities_of(transport::Transport& t) {
  Capabilities c;
  const transport::SharedWindows* w = t.shared_windows();
  c.windows = w != nullptr;
  c.single_copy = w != nullptr && w->single_copy();
  if (const std::optional<HostLayout> l = host_layout(t)) {
    c.spans_hosts = true;
    c.uniform_hosts = l->uniform();
    c.host_windows = t.group_windows(l->local) != nullptr;
  }
  return c;
}

namespace {

// Whether the model weighs `e` for `bytes` over `n` ranks on one host: the algorithms the
// rules choose from there. Over messages alone, the message algorithms. With shared
// windows, the window algorithms, and some message algorithms over the rings once what
// the window algorithm stages per rank (the message; for all_gather and all_to_all, whose
// `bytes` is one block, the n blocks) fills a window half: below that it is one barrier and
// one copy each side, as few synchronisations as any message, and what decides between the
// two, the engine's cost per message (records, matching, doorbells), is no term of the
// model (2 ranks, 4 KiB broadcast: tree 4.8 us, windows 0.8); from there both stream, at
// rates the probe measures. Those are the tree for broadcast and reduce (the rules run it
// for tiny ones with more ranks than processors), and, while every rank has a processor,
// the exchanges (all_gather's and reduce_scatter's ring, all_to_all's pairwise): with
// ranks sharing processors they took 2.5 times the predicted time (4 ranks on 2
// processors, all_to_all of 2 MiB).
bool weighed(const TableEntry& e, const Capabilities& caps, std::size_t bytes, int n,
             const CostParams& cost) {
  const std::string_view name = e.name;
  if (e.uses_host_windows || (name == "single_copy" && !caps.single_copy)) return false;
  if (e.uses_windows == caps.windows) return true;
  if (!caps.windows) return false;
  const bool blocks = e.kind == CollKind::kAllGather || e.kind == CollKind::kAllToAll ||
                      e.kind == CollKind::kReduceScatter;
  if (double(bytes) * (blocks ? n : 1) < cost.window_half) return false;
  if (name == "tree") return e.kind == CollKind::kBroadcast || e.kind == CollKind::kReduce;
  const bool running = cost.cpus <= 0 || n <= cost.cpus;
  return running && (((e.kind == CollKind::kAllGather || e.kind == CollKind::kReduceScatter) &&
                      name == "ring") ||
                     (e.kind == CollKind::kAllToAll && name == "pairwise"));
}

}  // namespace

// Predictions closer than this (relative) are a tie the model cannot resolve: its
// parameters are measured to a few percent and its formulas leave out second-order
// costs (e.g. TCP, 4 ranks, 16 MiB: ring and tree predicted 0.06% apart; measured 36.8
// against 42.1 ms in one run, 55.4 against 53.5 ms at 32 MiB in another). A tie keeps
// the rules' choice, so the default does not flip with the last digits of a probe.
constexpr double kModelTie = 0.01;

// On one host, the least predicted time among the algorithms the rules choose from there
// (weighed()); over messages alone only once the probe has measured the medium
// (net_measured). Ties between
// candidates go to the earlier entry of the table (selector_table.cc); null (the rules
// decide) when the rules' own choice is predicted within kModelTie of the best or is not
// weighed.
const char* Selector::modelled(CollKind kind, std::size_t bytes, int nranks,
                               const Capabilities& caps, double* best_us) const {
  const int k = static_cast<int>(kind);
  const unsigned kinds = caps.windows ? model_kinds_.windows : model_kinds_.messages;
  if ((kinds & (1u << k)) == 0 || caps.spans_hosts || nranks < 2) return nullptr;
  if (!caps.windows && !cfg_.cost.net_measured) return nullptr;
  // reduce_scatter with windows whose buffers outgrow the last-level cache (each rank's n
  // blocks and its recv block, all ranks together): memory bounds every algorithm, and the
  // model, whose figures beyond the L2 are measured on warm 2-4 MiB buffers, prices them
  // 2-3x low there and does not order them (AMD EPYC family 26, 32 MiB L3, 2 ranks, 16
  // MiB: windows 1.16 ms predicted, 1.9-2.2 measured; single copy 1.05 and 2.8; the ring
  // 0.98 and 2.5): the rules' windows, the fastest measured. Within it the order holds
  // (Intel family 6 model 167, 480 MiB L3, 2 ranks, 16 MiB: windows 1.36 ms predicted,
  // 1.40 measured; single copy 0.99 and 1.17). With the peers' buffers mapped single copy reads
  // at memory speed and the model's order holds (2 ranks, 4 MiB: single copy 91 us
  // predicted, 135 measured; windows 123 and 189).
  if (kind == CollKind::kReduceScatter && caps.windows && !cfg_.cost.mapped_peers &&
      double(bytes) * (nranks + 1) * nranks > cfg_.cost.llc_bytes)
    return nullptr;
  const std::string_view ruled = rules(kind, bytes, nranks, caps).name;
  const char* best = nullptr;
  double best_t = 0, ruled_t = -1;
  for (const TableEntry& e : entries()) {
    if (e.kind != kind || !weighed(e, caps, bytes, nranks, cfg_.cost)) continue;
    const double t = predict_us(cfg_.cost, kind, e.name, bytes, nranks, caps);
    if (t >= 0 && e.name == ruled) ruled_t = t;
    if (t >= 0 && (best == nullptr || t < best_t)) {
      best = e.name;
      best_t = t;
    }
  }
  // The rules' choice unpriced (e.g. the tiny tree above): the rules stand.
  if (best != nullptr && best != ruled && (ruled_t < 0 || ruled_t <= best_t * (1 + kModelTie)))
    return nullptr;
  if (best_us != nullptr) *best_us = best_t;
  return best;
}

Choice Selector::choose(CollKind kind, std::size_t bytes, int nranks,
                        const Capabilities& caps) const {
  const int k = static_cast<int>(kind);
  if (k < 0 || k >= op::kNumKinds) return Choice{"none", nullptr};
  if (const char* name = forced(k, bytes)) return choice(*find(kind, name), caps);
  if (const char* name = tabled(k, bytes, nranks)) return choice(*find(kind, name), caps);
  if (const char* name = modelled(kind, bytes, nranks, caps)) return choice(*find(kind, name), caps);
  return rules(kind, bytes, nranks, caps);
}

Estimate Selector::estimate(CollKind kind, std::size_t bytes, int nranks,
                            const Capabilities& caps) const {
  Estimate out;
  out.choice = choose(kind, bytes, nranks, caps);
  const int k = static_cast<int>(kind);
  if (k < 0 || k >= op::kNumKinds || out.choice.fn == nullptr) return out;
  out.rule_algo = rules(kind, bytes, nranks, caps).name;
  if (const char* m = modelled(kind, bytes, nranks, caps)) out.model_algo = m;
  out.source = forced(k, bytes) ? "override"
               : tabled(k, bytes, nranks) ? "table"
               : *out.model_algo != '\0' ? "model"
                                         : "rules";
  for (const TableEntry& e : entries()) {
    if (e.kind != kind) continue;
    const std::string_view name = e.name;
    if ((e.uses_windows && !caps.windows) || (name == "single_copy" && !caps.single_copy) ||
        (e.uses_host_windows && !caps.spans_hosts))
      continue;
    out.candidates.emplace_back(e.name, predict_us(cfg_.cost, kind, e.name, bytes, nranks, caps));
  }
  out.predicted_us = predict_us(cfg_.cost, kind, out.choice.name, bytes, nranks, caps);
  return out;
}

Choice Selector::rules(CollKind kind, std::size_t bytes, int nranks,
                       const Capabilities& caps) const {
  const bool has_windows = caps.windows;
  if (caps.spans_hosts && nranks > 1) {
    // Across hosts: within each host first, so the host links carry each byte as few
    // times as possible (docs/ALGORITHMS.md, "Across hosts"). reduce_scatter and
    // all_gather need as many ranks on every host. A small all_reduce is latency-bound:
    // rd's log2(n) rounds beat the hierarchical phases (three at least, more with several
    // ranks per host); rhd's 2 log2(n) do not, and send every byte across the links.
    const bool blocks = kind == CollKind::kReduceScatter || kind == CollKind::kAllGather;
    const bool small = kind == CollKind::kAllReduce && nranks > 2 &&
                       bytes <= cfg_.small_bytes && rd_fits(bytes, nranks, cfg_.small_bytes);
    if ((!blocks || caps.uniform_hosts) && !small)
      if (const TableEntry* e = find(kind, "hier")) return choice(*e, caps);
  }
  // Single copy is not a rules' choice: with windows sized to the cache, staging was as
  // fast or faster in every cell of the chorus-tune sweeps at 2 and 4 ranks (single copy
  // 5-200% slower: its reads pin pages and go through the kernel in 128 KiB units, while a
  // staged chunk stays in cache; docs/PERFORMANCE.md, "Windows that fit the cache"). It
  // stays available by name and to the model.
  const bool oversubscribed = cfg_.cost.cpus > 0 && nranks > cfg_.cost.cpus;
  if (has_windows && nranks > 1 && (kind == CollKind::kBroadcast || kind == CollKind::kReduce) &&
      bytes <= cfg_.small_bytes / 64 && oversubscribed) {
    // Tiny broadcast and reduce with more ranks than processors: the tree's messages go
    // without a handshake, the root returns as soon as they are queued and no rank waits
    // for all the others, where a window algorithm holds a barrier of all n, every one of
    // them scheduled in turn: 0.7 us against 13 us at 4 ranks on 2 processors up to 512 B.
    // With a processor each, the mailbox exchange is the faster (0.5 against 0.7-0.8 us at
    // 2 ranks; docs/PERFORMANCE.md, "Session 10").
    return choice(*find(kind, "tree"), caps);
  }
  if (kind == CollKind::kAllReduce) {
    // Small: latency-bound, log2(n) rounds. Large: bandwidth-bound, 2(n-1)/n of the data.
    // Within a host, the shared windows: one barrier and every rank reducing the whole
    // message while it is small, each rank reducing its share (fewer bytes) when large.
    // One shot moves (n + 3) x the bytes per rank (copy in 2, read n: its own part from
    // its private buffer, write 1), shm_direct 5.5 at 2 ranks, 6.25 at 4, toward 7
    // (docs/ALGORITHMS.md), with two barriers per chunk against one: at 2 ranks one
    // shot moves fewer bytes and waits less at every size (chorus-tune: 3.9 vs 4.6 us at
    // 32 KiB, 154 vs 192 us at 2 MiB). From 3 ranks it reads more, so it runs while the
    // reads of the peers' parts stay small: bytes x (n-1) < 2 x small_bytes (at 4 ranks
    // it won at 32 KiB by 30-40% and lost at 256 KiB by 40%).
    // Over messages, below small_bytes: rd while it fits (at 2 ranks always: one exchange
    // against ring's two, the same bytes), else rhd.
    const char* name = "ring";
    if (bytes <= cfg_.small_bytes && nranks > 1)
      name = rd_fits(bytes, nranks, cfg_.small_bytes) ? "rd" : "rhd";
    if (has_windows && nranks > 1)
      name = nranks == 2 || bytes * static_cast<std::size_t>(nranks - 1) < 2 * cfg_.small_bytes
                 ? "shm"
                 : "shm_direct";
    const TableEntry* e = find(kind, name);
    return choice(*e, caps);
  }
  if (kind == CollKind::kReduceScatter && !has_windows && nranks > 2 &&
      (nranks & (nranks - 1)) == 0 && bytes * static_cast<std::size_t>(nranks) <= cfg_.small_bytes) {
    // Over messages, a small input (n blocks) on a power of two of ranks: recursive
    // halving's log2(n) steps against the ring's n - 1, the same bytes.
    return choice(*find(kind, "rh"), caps);
  }
  if (has_windows && nranks > 1) {
    // Every other collective with a window algorithm: each byte crosses memory once in,
    // once out, with one barrier per chunk, instead of hops through per-pair rings.
    if (const TableEntry* e = find(kind, "shm")) return choice(*e, caps);
  }
  for (const TableEntry& e : entries()) {
    if (e.kind == kind) return choice(e, caps);
  }
  return Choice{"none", nullptr};  // send / recv: point-to-point, no algorithm
}

}  // namespace chorus::algo
