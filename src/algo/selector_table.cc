// The algorithm table (selector_table.h): every algorithm of every collective.
#include "algo/selector_table.h"

namespace chorus::algo {

namespace {

// Every (collective, algorithm) pair that exists; the first entry of a kind is its default.
constexpr TableEntry kTable[] = {
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

}  // namespace

std::span<const TableEntry> entries() { return kTable; }

Choice choice(const TableEntry& e, const Capabilities& caps) {
  return Choice{e.name, e.fn, e.uses_windows || (e.uses_host_windows && caps.host_windows)};
}

const TableEntry* find(CollKind kind, std::string_view name) {
  for (const TableEntry& e : entries()) {
    if (e.kind == kind && name == e.name) return &e;
  }
  return nullptr;
}

std::string known_names() {
  std::string out;
  for (const TableEntry& e : entries()) {
    if (out.find(std::string(e.name)) != std::string::npos) continue;
    if (!out.empty()) out += ", ";
    out += e.name;
  }
  return out;
}

std::string names_for(CollKind kind) {
  std::string out;
  for (const TableEntry& e : entries()) {
    if (e.kind != kind) continue;
    if (!out.empty()) out += ", ";
    out += e.name;
  }
  return out.empty() ? "none" : out;
}

}  // namespace chorus::algo
