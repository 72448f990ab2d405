// Input values whose results are exact in every dtype, and the checks against them.
//
// Every value is a small non-negative integer: sums stay <= 120 (exact in int8,
// float16 and bfloat16), products are 1, 2 or 4, averages divide exactly (the ranks'
// offsets cancel), so the expected result is known bit for bit whatever the
// reduction order.
#pragma once
#include <cstddef>
#include <cstdint>

#include "chorus/types.h"
#include "collective.h"

namespace chorus_bench {

// What a check needs to know about the row.
struct CheckSpec {
  Coll coll;
  chorus::DataType dtype;
  chorus::ReduceOp op;
  int rank;
  int nranks;
  int root;
  Shape shape;
};

// Fills every buffer the call reads with inputs; the output buffer `b` gets a
// sentinel pattern first (so an untouched output is caught).
void fill_buffers(const CheckSpec& s, const Layout& l, std::byte* b);
// Number of output elements of this rank that differ from the expected result.
std::int64_t count_wrong(const CheckSpec& s, const Layout& l);

}  // namespace chorus_bench
