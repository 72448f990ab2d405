// Selector::create: the overrides it is built with, parsed and checked once: the
// CHORUS_ALGO spec ("ring" for every collective that has a ring, or
// "all_reduce:rhd,broadcast:tree", with optional "@lo-hi" size ranges), the
// CHORUS_COST_MODEL list and the tuning table's rows; and their look-ups.
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "algo/selector.h"
#include "algo/selector_table.h"
#include "util/strings.h"

namespace chorus::algo {

namespace {

// The collectives whose automatic choice the cost model makes under CHORUS_COST_MODEL=auto,
// per medium: those where chorus-tune sweeps showed it within 10% of the best in at least
// as many cells as the rules (docs/PERFORMANCE.md, "Cost model" and "Windows that fit the
// cache"); the others keep the rules. Sweeps of 2026-12-02 (AMD EPYC, 2 vCPUs, 2 and 4
// ranks, 3 rounds each):
// - with shared windows (11:33-11:55 UTC, windows of half the L2): all_gather (and
//   reduce_scatter, until the sweeps of 15:28-15:45 UTC: with each rank's own block read
//   from its private buffer the model's single copy lost 25-45% at 4 ranks from 2 MiB,
//   the rules' `shm` none);
//   all_reduce went to the rules (the model ranked one-shot `shm` above `shm_direct`
//   from 32 KiB at 2 ranks, 13-34% slower measured), all_to_all lost then (05:03 UTC),
//   reduce and barrier have one window algorithm; broadcast joined on 2026-12-05 once the
//   probe measured the staged rate and the model weighed the tree (within 10%: 6 of 8
//   cells at 2 and at 4 ranks, the rules 3-4 of 8; docs/PERFORMANCE.md, "Session 14"),
//   and all_to_all on 2026-12-05 once the probe measured the staged exchange and the model
//   weighed pairwise over the rings (8 of 8 cells at 2 ranks against the rules' 5-6, 7 of 7
//   at 4 ranks as the rules; docs/PERFORMANCE.md, "Session 15"); reduce_scatter back on
//   2026-12-06 once the model priced the window algorithm's exchange between running
//   ranks and weighed the ring there (2 ranks, 256 KiB and 2 MiB: the ring, which the
//   rules' `shm` trailed by 21-48%; 4 ranks: `shm`, as the rules; "Session 17");
// - over messages alone (TCP, 11:05 UTC): all_reduce and reduce_scatter (all_reduce at
//   4 ranks on 2 processors: 83-91% of cells against the rules' 33-50%).
constexpr unsigned bit(CollKind k) { return 1u << static_cast<int>(k); }
constexpr ModelKinds kAutoModelKinds{
    bit(CollKind::kAllGather) | bit(CollKind::kBroadcast) | bit(CollKind::kAllToAll) |
        bit(CollKind::kReduceScatter),
    bit(CollKind::kAllReduce) | bit(CollKind::kReduceScatter)};

Status bad_spec(const std::string& spec, const std::string& why) {
  return invalid_argument("CHORUS_ALGO='" + spec + "': " + why);
}

}  // namespace

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
  const TableEntry* e = find(k, algo);
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

// CHORUS_COST_MODEL: "auto", "all", "none" or collective names (then for both media).
static Result<ModelKinds> parse_model_kinds(const std::string& spec) {
  const std::string_view whole = str_trim(spec);
  if (whole.empty() || whole == "auto") return kAutoModelKinds;
  if (whole == "none") return ModelKinds{0u, 0u};
  if (whole == "all") return ModelKinds{~0u, ~0u};
  unsigned kinds = 0;
  std::string_view rest = whole;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = str_trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (item.empty()) continue;
    int kind = -1;
    for (int k = 0; k < op::kNumKinds; ++k)
      if (item == to_string(static_cast<CollKind>(k))) kind = k;
    if (kind < 0)
      return invalid_argument("CHORUS_COST_MODEL='" + spec + "': unknown collective '" +
                              std::string(item) + "' (or auto, all, none)");
    kinds |= 1u << kind;
  }
  return ModelKinds{kinds, kinds};
}

// The tuning table's rows, each naming a known collective and one of its algorithms.
Status Selector::add_table(Selector& sel) {
  for (const SelectorConfig::TableRow& row : sel.cfg_.table) {
    int kind = -1;
    for (int k = 0; k < op::kNumKinds; ++k)
      if (row.kind == to_string(static_cast<CollKind>(k))) kind = k;
    const TableEntry* e = kind < 0 ? nullptr : find(static_cast<CollKind>(kind), row.algo);
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
    for (int k = 0; k < op::kNumKinds; ++k) {
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
      for (int k = 0; k < op::kNumKinds; ++k) {
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

const char* Selector::tabled(int kind, std::size_t bytes, int nranks) const {
  for (const Rule& r : table_[kind])
    if (r.nranks == nranks && bytes >= r.lo && bytes < r.hi) return r.name;
  return nullptr;
}

}  // namespace chorus::algo
