// The collectives chorus-bench measures: names, nccl-tests buffer conventions,
// bus-bandwidth factors, and the call itself.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "chorus/communicator.h"

namespace chorus_bench {

enum class Coll { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kReduce, kAllToAll,
                  kGather, kScatter };

const char* coll_name(Coll c);
// "all" gives every collective in the order above.
std::optional<std::vector<Coll>> parse_colls(const std::string& name);
bool has_redop(Coll c);
bool has_root(Coll c);
// busbw = algbw * factor (nccl-tests PERFORMANCE.md).
double busbw_factor(Coll c, int nranks);

// Element counts of one benchmark row, following nccl-tests: for all_reduce, reduce
// and broadcast the size is one rank's buffer; for all_gather, reduce_scatter,
// all_to_all, gather and scatter it is the larger (whole) buffer, split over ranks.
struct Shape {
  std::size_t count = 0;      // the `count` argument of the call
  std::size_t in_elems = 0;   // elements of the send buffer
  std::size_t out_elems = 0;  // elements of the recv buffer
  std::size_t elems = 0;      // elements reported ("count" column); bytes = elems * size
};
// Shape for `bytes` per rank; count 0 means the row is too small and is skipped.
Shape shape_for(Coll c, std::size_t bytes, std::size_t elem_size, int nranks);

// Where send and recv point for one call. Out of place: `a` and `b`; in place: inside
// `b` as each collective defines it (e.g. all_gather send = recv + rank * count).
struct Layout {
  std::byte* send;
  std::byte* recv;
};
Layout layout_for(Coll c, bool in_place, const Shape& s, std::size_t elem_size, int rank,
                  std::byte* a, std::byte* b);

// Runs the collective once.
void invoke(chorus::Communicator& comm, Coll c, const Layout& l, std::size_t count,
            chorus::DataType dtype, chorus::ReduceOp op, int root);

}  // namespace chorus_bench
