// The collective test grid (see collective_grid.h).
#include <gtest/gtest.h>

#include "collective_grid.h"
#include "rank_runner.h"
#include "reference.h"

namespace chorus::mp {

std::vector<Combo> reduce_grid(int nranks, int placements, bool per_block) {
  std::vector<Combo> g;
  int turn = 0;
  for (DataType t : kAllTypes) {
    for (ReduceOp op : kAllOps) {
      for (std::size_t count : kCounts) {
        if (count < 2) {
          g.push_back({t, op, count, turn++ % placements});
          continue;
        }
        for (int p = 0; p < placements; ++p) g.push_back({t, op, count, p});
      }
    }
  }
  const int blocks = per_block ? nranks : 1;
  g.push_back({DataType::kFloat32, ReduceOp::kSum, big_count(DataType::kFloat32, blocks), 0});
  g.push_back({DataType::kInt8, ReduceOp::kMax, big_count(DataType::kInt8, blocks),
               placements - 1});
  g.push_back({DataType::kBfloat16, ReduceOp::kAvg, big_count(DataType::kBfloat16, blocks), 0});
  return g;
}

std::vector<Combo> move_grid(int nranks, int placements, int blocks) {
  std::vector<Combo> g;
  for (DataType t : kAllTypes)
    for (std::size_t count : kCounts)
      for (int p = 0; p < placements; ++p) g.push_back({t, ReduceOp::kSum, count, p});
  g.push_back({DataType::kFloat32, ReduceOp::kSum, big_count(DataType::kFloat32, blocks), 0});
  g.push_back({DataType::kUint8, ReduceOp::kSum, big_count(DataType::kUint8, blocks),
               placements - 1});
  return g;
}

std::chrono::milliseconds deadline_for(int nranks) {
  return std::chrono::milliseconds(60000 + 15000 * nranks);
}

std::string rank_count_name(const ::testing::TestParamInfo<int>& info) {
  return std::to_string(info.param) + "ranks";
}

void expect_same_on_all_ranks(Communicator& comm, std::uint64_t digest, const std::string& what) {
  chorus::testing::step("all_gather of result digests (" + what + ")");
  std::vector<std::uint64_t> all(comm.size());
  comm.all_gather(&digest, all.data(), 1, DataType::kUint64);
  for (int q = 0; q < comm.size(); ++q) {
    chorus::testing::check(all[q] == digest, what + ": rank " + std::to_string(q) +
                                                 " computed different bits than rank " +
                                                 std::to_string(comm.rank()));
  }
}

}  // namespace chorus::mp
