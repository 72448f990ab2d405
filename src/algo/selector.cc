// Selector: the automatic algorithm choice per collective, and the CHORUS_ALGO override
// ("ring" for every collective that has a ring, or "all_reduce:rhd,broadcast:tree").
#include "algo/selector.h"

#include <cstdint>
#include <optional>
#include <vector>
#include <string_view>

#include "algo/hier_layout.h"
#include "algo/patterns.h"
#include "util/strings.h"

namespace chorus::algo {

namespace {

constexpr int kNumKinds = 12;


struct Entry {
  CollKind kind;
  const char* name;
  CollFn fn;
  bool uses_windows = false;
  bool uses_host_windows = false;  // its phases within a host use the host's windows
};

// Every (collective, algorithm) pair that exists; the first entry of a kind is its default.
constexpr Entry kTable[] = {
    {CollKind::kAllReduce, "ring", ring_all_reduce},
    {CollKind::kAllReduce, "rhd", rhd_all_reduce},
    {CollKind::kAllReduce, "rd", rd_all_reduce},
    {CollKind::kAllReduce, "tree", tree_all_reduce},
    {CollKind::kAllReduce, "hier", hier_all_reduce, false, true},
    {CollKind::kAllReduce, "shm_direct", shm_direct_all_reduce, true},
    {CollKind::kAllReduce, "shm", shm_all_reduce, true},
    {CollKind::kAllReduce, "single_copy", single_copy_all_reduce, true},
    {CollKind::kReduce, "tree", tree_reduce},
    {CollKind::kReduce, "hier", hier_reduce, false, true},
    {CollKind::kReduce, "shm", shm_reduce, true},
    {CollKind::kBroadcast, "tree", tree_broadcast},
    {CollKind::kBroadcast, "hier", hier_broadcast, false, true},
    {CollKind::kBroadcast, "shm", shm_broadcast, true},
    {CollKind::kBroadcast, "single_copy", single_copy_broadcast, true},
    {CollKind::kAllGather, "ring", ring_all_gather},
    {CollKind::kAllGather, "hier", hier_all_gather, false, true},
    {CollKind::kAllGather, "shm", shm_all_gather, true},
    {CollKind::kAllGather, "single_copy", single_copy_all_gather, true},
    {CollKind::kReduceScatter, "ring", ring_reduce_scatter},
    {CollKind::kReduceScatter, "rh", rh_reduce_scatter},
    {CollKind::kReduceScatter, "hier", hier_reduce_scatter, false, true},
    {CollKind::kReduceScatter, "shm", shm_reduce_scatter, true},
    {CollKind::kReduceScatter, "single_copy", single_copy_reduce_scatter, true},
    {CollKind::kAllToAll, "pairwise", pairwise_all_to_all},
    {CollKind::kAllToAll, "shm", shm_all_to_all, true},
    {CollKind::kAllToAll, "single_copy", single_copy_all_to_all, true},
    {CollKind::kAllToAllV, "pairwise", pairwise_all_to_all_v},
    {CollKind::kGather, "direct", direct_gather},
    {CollKind::kScatter, "direct", direct_scatter},
    {CollKind::kBarrier, "dissemination", dissemination_barrier},
    {CollKind::kBarrier, "shm", shm_barrier, true},
};

// The Choice of entry `e` on a transport with `caps`.
Choice choice(const Entry& e, const Capabilities& caps) {
  return Choice{e.name, e.fn, e.uses_windows || (e.uses_host_windows && caps.host_windows)};
}

const Entry* find(CollKind kind, std::string_view name) {
  for (const Entry& e : kTable) {
    if (e.kind == kind && name == e.name) return &e;
  }
  return nullptr;
}

std::string known_names() {
  std::string out;
  for (const Entry& e : kTable) {
    if (out.find(std::string(e.name)) != std::string::npos) continue;
    if (!out.empty()) out += ", ";
    out += e.name;
  }
  return out;
}

std::string names_for(CollKind kind) {
  std::string out;
  for (const Entry& e : kTable) {
    if (e.kind != kind) continue;
    if (!out.empty()) out += ", ";
    out += e.name;
  }
  return out.empty() ? "none" : out;
}

// True when single copy beats staging through the windows for this message, from
// chorus-bench A/B runs (docs/PERFORMANCE.md, "Single copy"): below the thresholds the
// extra barrier and the system calls cost more than the saved copy. `bytes` is as given
// to choose: per rank, or per block for all_gather, reduce_scatter and all_to_all, which
// move n blocks per rank (the threshold is on all n). With more ranks than processors,
// all_reduce and broadcast were as fast or faster staged (the readers' page pinning
// competes for the CPU); the others still gained.
bool single_copy_pays(CollKind kind, std::size_t bytes, int nranks, bool oversubscribed) {
  constexpr std::size_t kKiB = 1024;
  const std::size_t all_blocks = bytes * static_cast<std::size_t>(nranks);
  switch (kind) {
    case CollKind::kAllReduce: return !oversubscribed && bytes >= 512 * kKiB;
    case CollKind::kBroadcast: return !oversubscribed && bytes >= 256 * kKiB;
    case CollKind::kReduceScatter:
    case CollKind::kAllGather:
    case CollKind::kAllToAll: return all_blocks >= 256 * kKiB;
    default: return false;
  }
}

// The collectives whose automatic choice the cost model makes under CHORUS_COST_MODEL=auto:
// those where a chorus-tune sweep showed it within 10% of the best in at least as many
// cells as the rules (docs/PERFORMANCE.md, "Cost model"); the others keep the rules.
// Sweeps of 2026-12-02 05:03 UTC (AMD EPYC, 2 vCPUs, 2 and 4 ranks, 3 runs each): all_reduce,
// all_gather and reduce_scatter gained at both rank counts; broadcast lost at 4 ranks
// and all_to_all at 2; reduce and barrier have one window algorithm (nothing to choose).
constexpr unsigned kAutoModelKinds = (1u << static_cast<int>(CollKind::kAllReduce)) |
                                     (1u << static_cast<int>(CollKind::kAllGather)) |
                                     (1u << static_cast<int>(CollKind::kReduceScatter));

Status bad_spec(const std::string& spec, const std::string& why) {
  return invalid_argument("CHORUS_ALGO='" + spec + "': " + why);
}

}  // namespace

const char* to_string(CollKind k) {
  switch (k) {
    case CollKind::kAllReduce: return "all_reduce";
    case CollKind::kReduce: return "reduce";
    case CollKind::kBroadcast: return "broadcast";
    case CollKind::kAllGather: return "all_gather";
    case CollKind::kReduceScatter: return "reduce_scatter";
    case CollKind::kAllToAll: return "all_to_all";
    case CollKind::kAllToAllV: return "all_to_all_v";
    case CollKind::kGather: return "gather";
    case CollKind::kScatter: return "scatter";
    case CollKind::kBarrier: return "barrier";
    case CollKind::kSend: return "send";
    case CollKind::kRecv: return "recv";
  }
  return "invalid";
}

// "@lo-hi" after an algorithm name: sizes with K/M/G suffixes, lo empty = 0, hi empty =
// no bound; the range holds lo <= bytes < hi.
static Status parse_range(const std::string& spec, std::string_view text, std::uint64_t& lo,
                          std::uint64_t& hi) {
  const std::size_t dash = text.find('-');
  if (dash == std::string_view::npos)
    return bad_spec(spec, "size range '" + std::string(text) + "' is not lo-hi (e.g. 0-64K, 64K-)");
  const std::string_view l = str_trim(text.substr(0, dash)), h = str_trim(text.substr(dash + 1));
  using Size = std::optional<std::uint64_t>;
  const Size lv = l.empty() ? Size(0) : parse_size(l);
  const Size hv = h.empty() ? Size(UINT64_MAX) : parse_size(h);
  if (!lv || !hv) return bad_spec(spec, "size range '" + std::string(text) + "' has a bad size");
  if (*lv >= *hv) return bad_spec(spec, "size range '" + std::string(text) + "' is empty");
  lo = *lv;
  hi = *hv;
  return Status::ok();
}

Status Selector::add_rule(Selector& sel, const std::string& spec, int kind,
                          std::string_view algo) {
  const CollKind k = static_cast<CollKind>(kind);
  Rule rule;
  const std::size_t at = algo.find('@');
  if (at != std::string_view::npos) {
    CHORUS_RETURN_IF_ERROR(parse_range(spec, str_trim(algo.substr(at + 1)), rule.lo, rule.hi));
    algo = str_trim(algo.substr(0, at));
  }
  std::vector<Rule>& rules = sel.rules_[kind];
  if (algo == "auto") {  // automatic again, for the range (or every size)
    std::erase_if(rules, [&](const Rule& r) { return r.lo >= rule.lo && r.hi <= rule.hi; });
    return Status::ok();
  }
  const Entry* e = find(k, algo);
  if (e == nullptr) {
    return bad_spec(spec, "unknown algorithm '" + std::string(algo) + "' for " + to_string(k) +
                              " (known: " + names_for(k) + ")");
  }
  rule.name = e->name;
  if (at == std::string_view::npos) {  // every size: replaces what was there
    rules.assign(1, rule);
    return Status::ok();
  }
  for (const Rule& r : rules) {
    if (rule.lo < r.hi && r.lo < rule.hi)
      return bad_spec(spec, std::string("size ranges of ") + to_string(k) + " overlap (" +
                                std::string(algo) + " and " + r.name + ")");
  }
  rules.push_back(rule);
  return Status::ok();
}

const char* Selector::forced(int kind, std::size_t bytes) const {
  for (const Rule& r : rules_[kind])
    if (bytes >= r.lo && bytes < r.hi) return r.name;
  return nullptr;
}

// CHORUS_COST_MODEL: "auto", "all", "none" or collective names.
static Result<unsigned> parse_model_kinds(const std::string& spec) {
  const std::string_view whole = str_trim(spec);
  if (whole.empty() || whole == "auto") return kAutoModelKinds;
  if (whole == "none") return 0u;
  if (whole == "all") return ~0u;
  unsigned kinds = 0;
  std::string_view rest = whole;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = str_trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (item.empty()) continue;
    int kind = -1;
    for (int k = 0; k < kNumKinds; ++k)
      if (item == to_string(static_cast<CollKind>(k))) kind = k;
    if (kind < 0)
      return invalid_argument("CHORUS_COST_MODEL='" + spec + "': unknown collective '" +
                              std::string(item) + "' (or auto, all, none)");
    kinds |= 1u << kind;
  }
  return kinds;
}

// The tuning table's rows, each naming a known collective and one of its algorithms.
Status Selector::add_table(Selector& sel) {
  for (const SelectorConfig::TableRow& row : sel.cfg_.table) {
    int kind = -1;
    for (int k = 0; k < kNumKinds; ++k)
      if (row.kind == to_string(static_cast<CollKind>(k))) kind = k;
    const Entry* e = kind < 0 ? nullptr : find(static_cast<CollKind>(kind), row.algo);
    if (e == nullptr)
      return invalid_argument("tuning table: unknown collective or algorithm '" + row.kind +
                              ":" + row.algo + "'");
    if (row.lo >= row.hi || row.nranks < 1)
      return invalid_argument("tuning table: empty size range or rank count in '" + row.kind +
                              ":" + row.algo + "'");
    sel.table_[kind].push_back(Rule{row.lo, row.hi, e->name, row.nranks});
  }
  return Status::ok();
}

Result<Selector> Selector::create(const SelectorConfig& cfg) {
  Selector sel;
  sel.cfg_ = cfg;
  CHORUS_ASSIGN_OR_RETURN(sel.model_kinds_, parse_model_kinds(cfg.model_spec));
  CHORUS_RETURN_IF_ERROR(add_table(sel));
  const std::string& spec = cfg.override_spec;
  const std::string_view whole = str_trim(spec);
  if (whole.empty() || whole == "auto") return sel;
  if (whole.find(':') == std::string_view::npos && whole.find(',') == std::string_view::npos) {
    // One name: applies to every collective that has an algorithm of that name.
    const std::string_view name = str_trim(whole.substr(0, whole.find('@')));
    bool any = false;
    for (int k = 0; k < kNumKinds; ++k) {
      if (find(static_cast<CollKind>(k), name) == nullptr) continue;
      CHORUS_RETURN_IF_ERROR(add_rule(sel, spec, k, whole));
      any = true;
    }
    if (!any) {
      return bad_spec(spec, "unknown algorithm '" + std::string(name) +
                                "' (known: " + known_names() + ")");
    }
    return sel;
  }
  std::string_view rest = whole;
  int kind = -1;  // the collective of the last "collective:" item
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = str_trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (item.empty()) continue;
    const std::size_t colon = item.find(':');
    std::string_view algo_name = item;
    if (colon != std::string_view::npos) {
      const std::string_view kind_name = str_trim(item.substr(0, colon));
      algo_name = str_trim(item.substr(colon + 1));
      kind = -1;
      for (int k = 0; k < kNumKinds; ++k) {
        if (kind_name == to_string(static_cast<CollKind>(k))) kind = k;
      }
      if (kind < 0 || kind == static_cast<int>(CollKind::kSend) ||
          kind == static_cast<int>(CollKind::kRecv)) {
        return bad_spec(spec, "unknown collective '" + std::string(kind_name) + "'");
      }
    } else if (kind < 0 || item.find('@') == std::string_view::npos) {
      // Only a ranged item continues the previous collective.
      return bad_spec(spec, "entry '" + std::string(item) +
                                "' is not collective:algorithm (or algorithm@lo-hi after one)");
    }
    CHORUS_RETURN_IF_ERROR(add_rule(sel, spec, kind, algo_name));
  }
  return sel;
}

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

const char* Selector::tabled(int kind, std::size_t bytes, int nranks) const {
  for (const Rule& r : table_[kind])
    if (r.nranks == nranks && bytes >= r.lo && bytes < r.hi) return r.name;
  return nullptr;
}

// On one host with shared windows, among the window algorithms (those the rules choose
// from there), the least predicted time; ties go to the earlier entry of kTable.
const char* Selector::modelled(CollKind kind, std::size_t bytes, int nranks,
                               const Capabilities& caps, double* best_us) const {
  const int k = static_cast<int>(kind);
  if ((model_kinds_ & (1u << k)) == 0 || !caps.windows || caps.spans_hosts || nranks < 2)
    return nullptr;
  const char* best = nullptr;
  double best_t = 0;
  for (const Entry& e : kTable) {
    if (e.kind != kind || !e.uses_windows) continue;
    if (std::string_view(e.name) == "single_copy" && !caps.single_copy) continue;
    const double t = predict_us(cfg_.cost, kind, e.name, bytes, nranks, caps);
    if (t >= 0 && (best == nullptr || t < best_t)) {
      best = e.name;
      best_t = t;
    }
  }
  if (best_us != nullptr) *best_us = best_t;
  return best;
}

Choice Selector::choose(CollKind kind, std::size_t bytes, int nranks,
                        const Capabilities& caps) const {
  const int k = static_cast<int>(kind);
  if (k < 0 || k >= kNumKinds) return Choice{"none", nullptr};
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
  if (k < 0 || k >= kNumKinds || out.choice.fn == nullptr) return out;
  out.rule_algo = rules(kind, bytes, nranks, caps).name;
  if (const char* m = modelled(kind, bytes, nranks, caps)) out.model_algo = m;
  out.source = forced(k, bytes) ? "override"
               : tabled(k, bytes, nranks) ? "table"
               : *out.model_algo != '\0' ? "model"
                                         : "rules";
  for (const Entry& e : kTable) {
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
  const bool has_windows = caps.windows, single_copy = caps.single_copy;
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
      if (const Entry* e = find(kind, "hier")) return choice(*e, caps);
  }
  const bool oversubscribed = cfg_.host_cpus > 0 && nranks > cfg_.host_cpus;
  if (has_windows && single_copy && nranks > 1 &&
      single_copy_pays(kind, bytes, nranks, oversubscribed)) {
    // Large messages: one copy out of the owner's buffer instead of two through a window.
    if (const Entry* e = find(kind, "single_copy")) return choice(*e, caps);
  }
  if (kind == CollKind::kAllReduce) {
    // Small: latency-bound, log2(n) rounds. Large: bandwidth-bound, 2(n-1)/n of the data.
    // Within a host, the shared windows: one barrier and every rank reducing the whole
    // message while it is small, each rank reducing its share (fewer bytes) when large.
    // One shot while the n-fold read stays small (every rank reads all n windows),
    // measured (docs/PERFORMANCE.md): at 2 ranks one shot wins up to ~256 KiB
    // (bytes <= 4 x small_bytes), at 4 ranks up to ~16-32 KiB and at 8 up to ~8-16 KiB
    // (bytes x (n-1) <= small_bytes).
    // Over messages, below small_bytes: rd while it fits (at 2 ranks always: one exchange
    // against ring's two, the same bytes), else rhd.
    const char* name = "ring";
    if (bytes <= cfg_.small_bytes && nranks > 1)
      name = rd_fits(bytes, nranks, cfg_.small_bytes) ? "rd" : "rhd";
    const std::size_t one_shot_max = nranks == 2 ? 4 * cfg_.small_bytes : cfg_.small_bytes;
    if (has_windows && nranks > 1)
      name = bytes * static_cast<std::size_t>(nranks - 1) <= one_shot_max ? "shm" : "shm_direct";
    const Entry* e = find(kind, name);
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
    if (const Entry* e = find(kind, "shm")) return choice(*e, caps);
  }
  for (const Entry& e : kTable) {
    if (e.kind == kind) return choice(e, caps);
  }
  return Choice{"none", nullptr};  // send / recv: point-to-point, no algorithm
}

}  // namespace chorus::algo
