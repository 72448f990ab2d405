// Sub-communicators: split() by parity at 2, 4 and 8 ranks with every collective kind
// on the parts, reversed keys, kNoColor, size-1 parts, nested splits, new_group, use
// from several threads next to the parent, independent sequence numbers, bad arguments,
// and a member of a sub-communicator dying.
#include <gtest/gtest.h>

#include <cstdlib>
#include <span>
#include <thread>
#include <vector>

#include "collective_grid.h"
#include "exercise.h"
#include "failure_util.h"

namespace chorus::mp {
namespace {

using namespace chorus::testing;  // NOLINT
using std::chrono::milliseconds;

std::vector<int> ranks_where(int n, bool (*pred)(int, int), int arg) {
  std::vector<int> out;
  for (int r = 0; r < n; ++r)
    if (pred(r, arg)) out.push_back(r);
  return out;
}

bool same_parity(int r, int p) { return r % 2 == p; }

class SplitByParity : public ::testing::TestWithParam<int> {};

TEST_P(SplitByParity, EveryCollectiveWorksOnBothHalves) {
  auto body = [](Communicator& comm) {
    const int me = comm.rank(), n = comm.size();
    step("split by parity");
    std::optional<Communicator> half = comm.split(me % 2, me);
    check(half.has_value(), "split returned nullopt for a color >= 0");
    expect_members(*half, ranks_where(n, same_parity, me % 2), me, "half");
    exercise_every_kind(*half, me % 2);
    // The parent is still usable after the split.
    exercise_every_kind(comm, 100);
  };
  const int n = GetParam();
  EXPECT_TRUE(all_ok(RankRunner::run(n, body, deadline_for(n))));
}

INSTANTIATE_TEST_SUITE_P(Ranks, SplitByParity, ::testing::Values(2, 4, 8), rank_count_name);

TEST(Split, KeysReverseTheOrder) {
  auto body = [](Communicator& comm) {
    const int me = comm.rank(), n = comm.size();
    std::optional<Communicator> rev = comm.split(7, n - me);
    check(rev.has_value(), "split returned nullopt");
    expect_members(*rev, {4, 3, 2, 1, 0}, me, "reversed");
    // Equal keys keep the old order.
    std::optional<Communicator> same = comm.split(0, 42);
    expect_members(*same, {0, 1, 2, 3, 4}, me, "equal keys");
  };
  EXPECT_TRUE(all_ok(RankRunner::run(5, body, deadline_for(5))));
}

TEST(Split, NoColorRanksGetNulloptAndSizeOnePartsWork) {
  auto body = [](Communicator& comm) {
    const int me = comm.rank();
    step("split with ranks 0 and 2 not members");
    const bool out = me == 0 || me == 2;
    std::optional<Communicator> part = comm.split(out ? Communicator::kNoColor : 5, 0);
    if (out) {
      check(!part.has_value(), "kNoColor rank got a communicator");
    } else {
      check(part.has_value(), "member got nullopt");
      expect_members(*part, {1, 3}, me, "odd ranks");
      exercise_every_kind(*part, 3);
    }
    step("split into size-1 parts");
    std::optional<Communicator> alone = comm.split(me, 0);
    expect_members(*alone, {me}, me, "alone");
    exercise_every_kind(*alone, 4);
  };
  EXPECT_TRUE(all_ok(RankRunner::run(4, body, deadline_for(4))));
}

TEST(Split, NestedSplitOfASplit) {
  auto body = [](Communicator& comm) {
    const int me = comm.rank();
    std::optional<Communicator> half = comm.split(me % 2, me);  // 0,2,4,6 | 1,3,5,7
    const int h = half->rank();
    std::optional<Communicator> quarter = half->split(h / 2, -h);  // pairs, reversed
    std::vector<int> want = me % 2 == 0 ? std::vector<int>{0, 2, 4, 6}
                                        : std::vector<int>{1, 3, 5, 7};
    want = h / 2 == 0 ? std::vector<int>{want[1], want[0]} : std::vector<int>{want[3], want[2]};
    expect_members(*quarter, want, me, "quarter");
    exercise_every_kind(*quarter, 5);
    exercise_every_kind(*half, 6);
  };
  EXPECT_TRUE(all_ok(RankRunner::run(8, body, deadline_for(8))));
}

TEST(NewGroup, SubsetInListOrderAndNonMembersGetNullopt) {
  auto body = [](Communicator& comm) {
    const int me = comm.rank();
    const std::vector<int> list = {3, 0, 4};
    std::optional<Communicator> g = comm.new_group(list);
    if (me == 1 || me == 2) {
      check(!g.has_value(), "non-member got a communicator");
    } else {
      check(g.has_value(), "member got nullopt");
      expect_members(*g, list, me, "group");
      exercise_every_kind(*g, 7);
    }
    comm.barrier();
  };
  EXPECT_TRUE(all_ok(RankRunner::run(5, body, deadline_for(5))));
}

// Each communicator is used by one thread; the parent and the half run at the same time.
TEST(Split, SubCommunicatorsRunInOtherThreadsNextToTheParent) {
  auto body = [](Communicator& comm) {
    const int me = comm.rank();
    std::optional<Communicator> half = comm.split(me % 2, me);
    std::string parent_err, half_err;
    auto loop = [](Communicator& c, int base, std::string* err) {
      try {
        for (int i = 0; i < 200; ++i) {
          std::vector<std::int32_t> v(257, base * 1000 + i), out(257);
          c.all_reduce(v.data(), out.data(), v.size(), DataType::kInt32, ReduceOp::kSum);
          std::int32_t want = 0;
          std::vector<std::int32_t> bases(c.size());
          c.all_gather(&base, bases.data(), 1, DataType::kInt32);
          for (int b : bases) want += b * 1000 + i;
          for (auto x : out)
            if (x != want) throw std::runtime_error("iteration " + std::to_string(i) + ": got " +
                                                    std::to_string(x) + " want " +
                                                    std::to_string(want));
        }
      } catch (const std::exception& e) {
        *err = e.what();
      }
    };
    std::thread t([&] { loop(*half, me + 10, &half_err); });
    loop(comm, me, &parent_err);
    t.join();
    check(parent_err.empty(), "parent: " + parent_err);
    check(half_err.empty(), "half: " + half_err);
  };
  EXPECT_TRUE(all_ok(RankRunner::run(4, body, deadline_for(4))));
}

TEST(Split, SequenceNumbersAreIndependent) {
  auto body = [](Communicator& comm) {
    for (int i = 0; i < 3; ++i) comm.barrier();  // seq 0..2
    std::optional<Communicator> half = comm.split(comm.rank() % 2, 0);  // seq 3
    half->barrier();                                                     // its seq 0
    comm.barrier();                                                      // seq 4
    const std::string sub = half->flight_record(), parent = comm.flight_record();
    check(sub.find("seq=0 op=barrier") != std::string::npos, "sub-communicator:\n" + sub);
    check(sub.find("seq=1 ") == std::string::npos, "sub-communicator:\n" + sub);
    check(parent.find("seq=3 op=split") != std::string::npos, "parent:\n" + parent);
    check(parent.find("seq=4 op=barrier") != std::string::npos, "parent:\n" + parent);
  };
  EXPECT_TRUE(all_ok(RankRunner::run(4, body, deadline_for(4))));
}

TEST(Split, BadArgumentsAreRejectedAndTheCommunicatorStaysUsable) {
  auto body = [](Communicator& comm) {
    expect_error(ErrorCode::kInvalidArgument, [&] { comm.split(-2, 0); }, "color=-2");
    expect_error(ErrorCode::kInvalidArgument, [&] { comm.new_group({}); }, "ranks is empty");
    const int out_of_range[] = {0, 3};
    expect_error(ErrorCode::kInvalidArgument, [&] { comm.new_group(out_of_range); },
                 "ranks[1]=3 is out of range [0, 3)");
    const int negative[] = {-1};
    expect_error(ErrorCode::kInvalidArgument, [&] { comm.new_group(negative); },
                 "ranks[0]=-1 is out of range");
    const int twice[] = {1, 2, 1};
    expect_error(ErrorCode::kInvalidArgument, [&] { comm.new_group(twice); },
                 "ranks[2]=1 is listed twice (also ranks[0])");
    // Different lists on different ranks: every rank finds out from the exchange.
    const std::vector<int> mine =
        comm.rank() == 0 ? std::vector<int>{0, 1} : std::vector<int>{1, 0};
    expect_error(ErrorCode::kInvalidArgument, [&] { comm.new_group(mine); },
                 "passed different arguments");
    std::optional<Communicator> all = comm.split(0, 0);
    expect_members(*all, {0, 1, 2}, comm.rank(), "after bad arguments");
    comm.barrier();
  };
  EXPECT_TRUE(all_ok(RankRunner::run(3, body, deadline_for(3))));
}

// Options carry over (the configured ones: not a set_timeout() value).
TEST(Split, OptionsCarryOver) {
  auto body = [](Communicator& comm) {
    comm.set_timeout(milliseconds(5000));
    std::optional<Communicator> half = comm.split(comm.rank() % 2, 0);
    check(half->timeout() == milliseconds(4321),
          "sub-communicator timeout " + std::to_string(half->timeout().count()) + " ms");
    std::vector<float> v(64, 1.0f);
    half->all_reduce(std::span<float>(v), ReduceOp::kSum);
    check(v[0] == 2.0f, "all_reduce result " + std::to_string(v[0]));
    const std::string rec = half->flight_record();
    check(rec.find("op=all_reduce") != std::string::npos &&
              rec.find("algo=tree") != std::string::npos,
          "Options::algo all_reduce:tree did not carry over:\n" + rec);
  };
  RunOptions opts;
  opts.options.timeout = milliseconds(4321);
  opts.options.algo = "all_reduce:tree";
  EXPECT_TRUE(all_ok(RankRunner::run(4, body, deadline_for(4), opts)));
}

// On one host (the default transport, auto = shm) a sub-communicator has its own segment
// and shared windows, so a large all_reduce runs a window algorithm among its own ranks.
TEST(Split, SubCommunicatorsOnOneHostUseTheirOwnSharedWindows) {
  auto body = [](Communicator& comm) {
    std::optional<Communicator> half = comm.split(comm.rank() / 2, comm.rank());
    std::vector<float> v(1 << 20, 1.5f);
    half->all_reduce(std::span<float>(v), ReduceOp::kSum);
    check(v[0] == 3.0f && v.back() == 3.0f, "all_reduce result " + std::to_string(v[0]));
    const char* transport = std::getenv("CHORUS_TRANSPORT");
    const bool tcp = transport != nullptr && std::string(transport) == "tcp";
    const std::string rec = half->flight_record();
    // Over shm: a window algorithm (at 2 ranks the one shot, `shm`; shm_direct or single
    // copy when forced); over TCP a message algorithm (the cost model's pick).
    const bool windowed = rec.find("algo=shm ") != std::string::npos ||
                          rec.find("algo=shm_direct") != std::string::npos ||
                          rec.find("algo=single_copy") != std::string::npos;
    const bool messages = rec.find("algo=ring") != std::string::npos ||
                          rec.find("algo=tree") != std::string::npos ||
                          rec.find("algo=rd") != std::string::npos ||
                          rec.find("algo=rhd") != std::string::npos;
    check(tcp ? messages && !windowed : windowed,
          std::string("expected ") + (tcp ? "a message algorithm" : "a window algorithm") + ":\n" + rec);
  };
  EXPECT_TRUE(all_ok(RankRunner::run(4, body, deadline_for(4))));
}

// Old rank 3 (rank 1 of the odd half) dies in the half's loop; old rank 1 gets
// kPeerLost within 2 s naming its half's rank 1; the even half is unaffected.
TEST(Split, MemberOfASubCommunicatorDies) {
  auto body = [](Communicator& comm) {
    const int me = comm.rank();
    std::optional<Communicator> half = comm.split(me % 2, me);
    std::vector<float> v(4096, 1.0f), out(4096);
    for (int s = 0; s < 200; ++s) {
      if (me == 3 && s == 5) {
        stamp("death");
        ::_exit(0);
      }
      step("half all_reduce step " + std::to_string(s));
      if (me != 1) {
        half->all_reduce(v.data(), out.data(), v.size(), DataType::kFloat32, ReduceOp::kSum);
        continue;
      }
      try {
        half->all_reduce(v.data(), out.data(), v.size(), DataType::kFloat32, ReduceOp::kSum);
      } catch (const Error& e) {
        check(e.code() == ErrorCode::kPeerLost, std::string("expected peer_lost: ") + e.what());
        check(names_peer_address(e, 1), std::string("does not name half rank 1: ") + e.what());
        const double late = seconds_since_stamp("death");
        check(late < 2.0, "peer_lost " + std::to_string(late) + " s after the death");
        return;
      }
    }
    check(me % 2 == 0, "the odd half's loop finished although its rank 1 died");
  };
  RunOptions opts;
  opts.stop_on_failure = false;
  opts.options.timeout = milliseconds(30000);
  auto r = RankRunner::run(4, body, milliseconds(60000), opts);
  for (int rank = 0; rank < 4; ++rank) {
    if (rank == 3) {
      EXPECT_EQ(r.ranks[rank].exit_code, 0) << r.summary();
    } else {
      EXPECT_EQ(r.ranks[rank].state, RankState::kOk) << r.summary();
    }
  }
}

}  // namespace
}  // namespace chorus::mp
