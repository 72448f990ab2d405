// The test grid shared by the collective tests: rank counts, (dtype, op, count,
// placement) combinations sized for a 2-core machine, deadlines, and the check that
// every rank computed the same bits.
#pragma once
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "chorus/communicator.h"
#include "chorus/types.h"

namespace chorus::mp {

inline constexpr int kRankCounts[] = {1, 2, 3, 4, 5, 8};

struct Combo {
  DataType dtype;
  ReduceOp op;        // kSum for data-movement collectives
  std::size_t count;  // elements per rank / per block
  int placement;      // 0 = out-of-place; 1.. = the collective's in-place forms
};

// Every dtype x op x kCounts (counts >= 7 in every placement, 0 and 1 in one each),
// then three combinations over 4 MiB: float32 sum, int8 max (last placement), bfloat16
// avg. per_block: the big count is split over n blocks (reduce_scatter).
std::vector<Combo> reduce_grid(int nranks, int placements, bool per_block);
// Every dtype x kCounts x placement, then float32 over 4 MiB (total of `blocks`
// blocks) in placement 0 and uint8 over 4 MiB in the last placement.
std::vector<Combo> move_grid(int nranks, int placements, int blocks);

std::chrono::milliseconds deadline_for(int nranks);
std::string rank_count_name(const ::testing::TestParamInfo<int>& info);

// Throws CheckFailure unless every rank passed the same digest.
void expect_same_on_all_ranks(Communicator& comm, std::uint64_t digest, const std::string& what);

}  // namespace chorus::mp
