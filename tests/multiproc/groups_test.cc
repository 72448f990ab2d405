// Groups: a ring of 4 MiB blocking send/recv inside a group (deadlocks without it: large
// messages use rendezvous), 50 small all_reduces fused into one, a mixed group of
// transfers and collectives, nesting, and group_end() without group_start().
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "rank_runner.h"

namespace chorus {
namespace {

using namespace chorus::testing;  // NOLINT
using std::chrono::milliseconds;

std::int32_t ring_value(int r, std::size_t i, int rep) {
  return static_cast<std::int32_t>(r * 1000003 + static_cast<int>(i) * 7 + rep);
}

class GroupRing : public ::testing::TestWithParam<int> {};

TEST_P(GroupRing, BlockingSendRightRecvLeftOf4MiB) {
  auto body = [](Communicator& comm) {
    const int n = comm.size(), r = comm.rank();
    const int right = (r + 1) % n, left = (r + n - 1) % n;
    const std::size_t count = (4u << 20) / sizeof(std::int32_t);
    std::vector<std::int32_t> out(count), in(count);
    for (int rep = 0; rep < 3; ++rep) {
      for (std::size_t i = 0; i < count; ++i) out[i] = ring_value(r, i, rep);
      std::fill(in.begin(), in.end(), -1);
      step("group of send right + recv left, rep " + std::to_string(rep));
      comm.group_start();
      comm.send(out.data(), count, DataType::kInt32, right);  // returns at once
      comm.recv(in.data(), count, DataType::kInt32, left);
      comm.group_end();
      for (std::size_t i = 0; i < count; ++i)
        if (in[i] != ring_value(left, i, rep))
          check(false, "element " + std::to_string(i) + " from rank " + std::to_string(left) +
                           " = " + std::to_string(in[i]));
    }
  };
  EXPECT_TRUE(all_ok(RankRunner::run(GetParam(), body, milliseconds(60000))));
}

INSTANTIATE_TEST_SUITE_P(Ranks, GroupRing, ::testing::Values(2, 4, 8));

// 50 all_reduces of 1..50 elements (some in place) in one group are fused: the flight
// recorder shows one fused_all_reduce of all their elements, and every result is exact.
class GroupFusion : public ::testing::TestWithParam<int> {};

TEST_P(GroupFusion, FiftySmallAllReducesFuseIntoOne) {
  auto body = [](Communicator& comm) {
    const int n = comm.size(), r = comm.rank();
    constexpr int kOps = 50;
    std::vector<std::vector<std::int64_t>> send(kOps), recv(kOps);
    std::size_t total = 0;
    std::vector<Work> works;
    comm.group_start();
    for (int k = 0; k < kOps; ++k) {
      const std::size_t count = static_cast<std::size_t>(k + 1);
      total += count;
      send[k].resize(count);
      recv[k].assign(count, -1);
      for (std::size_t i = 0; i < count; ++i) send[k][i] = (r + 1) * 1000 + k * 10 + static_cast<int>(i);
      const bool in_place = k % 3 == 0;
      if (k % 2 == 0) {
        comm.all_reduce(send[k].data(), in_place ? send[k].data() : recv[k].data(), count,
                        DataType::kInt64, ReduceOp::kSum);
      } else {
        works.push_back(comm.all_reduce_async(send[k].data(),
                                              in_place ? send[k].data() : recv[k].data(), count,
                                              DataType::kInt64, ReduceOp::kSum));
      }
    }
    for (const Work& w : works) check(!w.test(), "a Work of an open group is complete");
    comm.group_end();
    for (const Work& w : works) check(w.test(), "a Work of the group is pending after group_end");
    for (int k = 0; k < kOps; ++k) {
      const auto& out = k % 3 == 0 ? send[k] : recv[k];
      for (std::size_t i = 0; i < out.size(); ++i) {
        const std::int64_t want = 1000LL * n * (n + 1) / 2 + n * (k * 10 + static_cast<int>(i));
        check(out[i] == want, "all_reduce " + std::to_string(k) + " element " + std::to_string(i) +
                                  " = " + std::to_string(out[i]) + ", expected " + std::to_string(want));
      }
    }
    const std::string fr = comm.flight_record();
    const std::string fused = "op=fused_all_reduce dtype=int64 count=" + std::to_string(total) + " ";
    check(fr.find(fused) != std::string::npos, "no '" + fused + "' in the flight record:\n" + fr);
    check(fr.find("algo=fused state=done") != std::string::npos, "members not marked fused:\n" + fr);
    // The communicator keeps working after the group (seqs stayed aligned).
    std::int64_t one = 1, sum = 0;
    comm.all_reduce(&one, &sum, 1, DataType::kInt64, ReduceOp::kSum);
    check(sum == n, "all_reduce after the group: " + std::to_string(sum));
  };
  EXPECT_TRUE(all_ok(RankRunner::run(GetParam(), body, milliseconds(60000))));
}

INSTANTIATE_TEST_SUITE_P(Ranks, GroupFusion, ::testing::Values(2, 4));

// Transfers and collectives in one group, with a nested group inside.
TEST(Groups, MixedTransfersAndCollectivesWithNesting) {
  auto body = [](Communicator& comm) {
    const int n = comm.size(), r = comm.rank();
    const int right = (r + 1) % n, left = (r + n - 1) % n;
    const std::size_t big = (1u << 20) + 5;
    std::vector<std::int32_t> out(big), in(big, -1), red(300000), gathered(4 * n, -1);
    for (std::size_t i = 0; i < big; ++i) out[i] = ring_value(r, i, 9);
    for (std::size_t i = 0; i < red.size(); ++i) red[i] = static_cast<std::int32_t>(i % 11 + r);
    std::int32_t mine[4] = {r, r + 1, r + 2, r + 3};
    std::int32_t small = r + 1, small_sum = 0;
    Stream s = comm.create_stream("side");
    comm.group_start();
    Work recv_w = comm.recv_async(in.data(), big, DataType::kInt32, left, s);
    comm.all_reduce(&small, &small_sum, 1, DataType::kInt32, ReduceOp::kSum);
    comm.group_start();  // nested: only the outer end launches
    Work gather_w = comm.all_gather_async(mine, gathered.data(), 4, DataType::kInt32);
    comm.group_end();
    check(!gather_w.test(), "the inner group_end() launched the group");
    Work red_w = comm.all_reduce_async(red.data(), red.data(), red.size(), DataType::kInt32,
                                       ReduceOp::kMax, s);
    comm.send(out.data(), big, DataType::kInt32, right);
    comm.group_end();
    for (const Work* w : {&recv_w, &gather_w, &red_w})
      check(w->test() && w->state() == Work::State::kDone, "a Work of the group is not done");
    check(small_sum == n * (n + 1) / 2, "all_reduce in the group: " + std::to_string(small_sum));
    for (std::size_t i = 0; i < big; ++i)
      if (in[i] != ring_value(left, i, 9)) check(false, "recv element " + std::to_string(i));
    for (int q = 0; q < n; ++q)
      for (int j = 0; j < 4; ++j)
        check(gathered[q * 4 + j] == q + j, "all_gather slot " + std::to_string(q * 4 + j));
    for (std::size_t i = 0; i < red.size(); ++i)
      if (red[i] != static_cast<std::int32_t>(i % 11 + n - 1)) check(false, "max element " + std::to_string(i));
  };
  for (int n : {2, 3, 4}) EXPECT_TRUE(all_ok(RankRunner::run(n, body, milliseconds(60000)))) << n;
}

TEST(Groups, GroupEndWithoutStartIsInvalid) {
  auto body = [](Communicator& comm) {
    expect_error(ErrorCode::kInvalidArgument, [&] { comm.group_end(); }, "group_start");
    comm.group_start();
    comm.group_end();  // an empty group is fine
    expect_error(ErrorCode::kInvalidArgument, [&] { comm.group_end(); }, "group_start");
    comm.group_start();
    expect_error(ErrorCode::kInvalidArgument, [&] { comm.agree(true); }, "group");
    comm.group_end();
    check(comm.agree(comm.rank() == 1), "agree after the group");
    // Waiting for an operation of one's own open group would never return: refused.
    std::vector<float> v(8, 1.0f);
    comm.group_start();
    Work w = comm.all_reduce_async(v.data(), v.data(), v.size(), DataType::kFloat32,
                                   ReduceOp::kSum);
    expect_error(ErrorCode::kInvalidArgument, [&] { w.wait(); }, "group_end");
    expect_error(ErrorCode::kInvalidArgument, [&] { w.wait(milliseconds(10)); }, "group_end");
    comm.group_end();
    w.wait();
    check(v[0] == static_cast<float>(comm.size()), "wrong sum after the group");
  };
  EXPECT_TRUE(all_ok(RankRunner::run(2, body, milliseconds(30000))));
}

}  // namespace
}  // namespace chorus
