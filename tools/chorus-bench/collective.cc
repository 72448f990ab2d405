// Per-collective conventions of chorus-bench (sizes, bandwidth factors, in-place layouts).
#include "collective.h"

namespace chorus_bench {
namespace {

struct CollInfo {
  Coll coll;
  const char* name;
  bool per_rank_split;  // the size is the whole buffer, split in `nranks` blocks
  bool redop;
  bool root;
};

constexpr CollInfo kColls[] = {
    {Coll::kAllReduce, "all_reduce", false, true, false},
    {Coll::kAllGather, "all_gather", true, false, false},
    {Coll::kReduceScatter, "reduce_scatter", true, true, false},
    {Coll::kBroadcast, "broadcast", false, false, true},
    {Coll::kReduce, "reduce", false, true, true},
    {Coll::kAllToAll, "all_to_all", true, false, false},
    {Coll::kGather, "gather", true, false, true},
    {Coll::kScatter, "scatter", true, false, true},
};

const CollInfo& info(Coll c) { return kColls[static_cast<int>(c)]; }

}  // namespace

const char* coll_name(Coll c) { return info(c).name; }
bool has_redop(Coll c) { return info(c).redop; }
bool has_root(Coll c) { return info(c).root; }

std::optional<std::vector<Coll>> parse_colls(const std::string& name) {
  std::vector<Coll> out;
  for (const CollInfo& i : kColls)
    if (name == "all" || name == i.name) out.push_back(i.coll);
  if (out.empty()) return std::nullopt;
  return out;
}

double busbw_factor(Coll c, int nranks) {
  double n = nranks;
  switch (c) {
    case Coll::kAllReduce: return 2.0 * (n - 1) / n;
    case Coll::kBroadcast:
    case Coll::kReduce: return 1.0;
    default: return (n - 1) / n;
  }
}

Shape shape_for(Coll c, std::size_t bytes, std::size_t elem_size, int nranks) {
  Shape s;
  std::size_t n = static_cast<std::size_t>(nranks);
  std::size_t elems = bytes / elem_size;
  if (!info(c).per_rank_split) {
    s.count = s.in_elems = s.out_elems = s.elems = elems;
    return s;
  }
  s.count = elems / n;
  s.elems = s.count * n;
  switch (c) {
    case Coll::kAllGather:
    case Coll::kGather: s.in_elems = s.count, s.out_elems = s.elems; break;
    case Coll::kReduceScatter:
    case Coll::kScatter: s.in_elems = s.elems, s.out_elems = s.count; break;
    default: s.in_elems = s.out_elems = s.elems; break;
  }
  return s;
}

Layout layout_for(Coll c, bool in_place, const Shape& s, std::size_t elem_size, int rank,
                  std::byte* a, std::byte* b) {
  if (!in_place) return {a, b};
  std::byte* own_block = b + static_cast<std::size_t>(rank) * s.count * elem_size;
  switch (c) {
    case Coll::kAllGather:
    case Coll::kGather: return {own_block, b};   // my block already sits in the output
    case Coll::kReduceScatter:
    case Coll::kScatter: return {b, own_block};  // my block of the input is the output
    default: return {b, b};
  }
}

void invoke(chorus::Communicator& comm, Coll c, const Layout& l, std::size_t count,
            chorus::DataType dtype, chorus::ReduceOp op, int root) {
  switch (c) {
    case Coll::kAllReduce: return comm.all_reduce(l.send, l.recv, count, dtype, op);
    case Coll::kAllGather: return comm.all_gather(l.send, l.recv, count, dtype);
    case Coll::kReduceScatter: return comm.reduce_scatter(l.send, l.recv, count, dtype, op);
    case Coll::kBroadcast: return comm.broadcast(l.send, l.recv, count, dtype, root);
    case Coll::kReduce: return comm.reduce(l.send, l.recv, count, dtype, op, root);
    case Coll::kAllToAll: return comm.all_to_all(l.send, l.recv, count, dtype);
    case Coll::kGather: return comm.gather(l.send, l.recv, count, dtype, root);
    case Coll::kScatter: return comm.scatter(l.send, l.recv, count, dtype, root);
  }
}

}  // namespace chorus_bench
