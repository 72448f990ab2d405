// Ranks that the kernel left crowded on one processor while another has fewer move apart
// at their waits (spread.cc): real rank processes, given two processors, get bound to the
// first, publish it at a window barrier (or a mailbox exchange), get both back and go on;
// at the end as many run on each (2 ranks: one each; 4 ranks: two each).
#include <sched.h>
#include <unistd.h>

#include <fstream>
#include <tuple>

#include "transport/shm/spread.h"
#include "transport/shm/test_world.h"

namespace chorus::shm::testing {
namespace {

cpu_set_t cpus(std::initializer_list<int> list) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : list) CPU_SET(c, &set);
  return set;
}

// Ranks per processor, as spread_target counts them: {processor, ranks} pairs.
std::vector<std::uint16_t> placed(std::initializer_list<std::pair<int, int>> list) {
  std::vector<std::uint16_t> ranks(CPU_SETSIZE, 0);
  for (auto [c, n] : list) ranks[c] = static_cast<std::uint16_t>(n);
  return ranks;
}

int anywhere(int) { return 0; }

TEST(SpreadTarget, MovesOnlyWhereThatEvensTheTwoOut) {
  const cpu_set_t two = cpus({0, 1});
  EXPECT_EQ(spread_target(placed({{0, 2}}).data(), two, 0, anywhere), 1);
  EXPECT_EQ(spread_target(placed({{0, 1}}).data(), two, 0, anywhere), -1);  // alone
  EXPECT_EQ(spread_target(placed({{0, 3}, {1, 1}}).data(), two, 0, anywhere), 1);
  EXPECT_EQ(spread_target(placed({{0, 2}, {1, 2}}).data(), two, 0, anywhere), -1);
  EXPECT_EQ(spread_target(placed({{0, 2}, {1, 1}}).data(), two, 0, anywhere), -1);
  // Only within the mask: processor 1 is free but not this rank's.
  EXPECT_EQ(spread_target(placed({{0, 2}}).data(), cpus({0, 2}), 0, anywhere), 2);
  EXPECT_EQ(spread_target(placed({{0, 2}}).data(), cpus({0}), 0, anywhere), -1);
}

TEST(SpreadTarget, FewestRanksFirstThenTheNearest) {
  const cpu_set_t eight = cpus({0, 1, 2, 3, 4, 5, 6, 7});
  // Processors 4-7 share processor 1's cache, 0-3 are in another package.
  auto near_one = [](int c) { return c >= 4 ? 2 : 0; };
  EXPECT_EQ(spread_target(placed({{1, 2}}).data(), eight, 1, near_one), 4);
  // Same package (1) beats another (0), a shared cache (2) beats both.
  auto graded = [](int c) { return c == 6 ? 2 : c >= 3 ? 1 : 0; };
  EXPECT_EQ(spread_target(placed({{1, 2}}).data(), eight, 1, graded), 6);
  // A processor with fewer ranks wins over a nearer one with more.
  EXPECT_EQ(spread_target(placed({{1, 3}, {4, 1}, {5, 1}, {6, 1}, {7, 1}}).data(), eight, 1,
                          near_one),
            0);
}

TEST(SpreadTarget, HostNearnessIsSymmetricAndGraded) {
  cpu_set_t mask;
  ASSERT_EQ(::sched_getaffinity(0, sizeof mask, &mask), 0);
  for (int a = 0; a < CPU_SETSIZE; ++a) {
    if (!CPU_ISSET(a, &mask)) continue;
    for (int b = 0; b < CPU_SETSIZE; ++b) {
      if (!CPU_ISSET(b, &mask)) continue;
      const int n = host_nearness(a, b);
      EXPECT_GE(n, 0);
      EXPECT_LE(n, 2);
      EXPECT_EQ(n, host_nearness(b, a)) << a << " " << b;
    }
  }
  if (::access("/sys/devices/system/cpu/cpu0/topology/physical_package_id", R_OK) == 0 &&
      CPU_ISSET(0, &mask)) {
    EXPECT_GE(host_nearness(0, 0), 1);  // a processor is in its own package
  }
}

enum class Point { kBarrier, kExchange };

class Spread : public ::testing::TestWithParam<std::tuple<Point, int>> {};

TEST_P(Spread, RanksCrowdedOnOneProcessorEvenOut) {
  const auto [point, n] = GetParam();
  cpu_set_t mask, two, one;
  ASSERT_EQ(::sched_getaffinity(0, sizeof mask, &mask), 0);
  if (CPU_COUNT(&mask) < 2) GTEST_SKIP() << "needs two processors, has " << CPU_COUNT(&mask);
  int cpu[2] = {0, 0};
  while (!CPU_ISSET(cpu[0], &mask)) ++cpu[0];
  cpu[1] = cpu[0] + 1;
  while (!CPU_ISSET(cpu[1], &mask)) ++cpu[1];
  CPU_ZERO(&two);
  CPU_SET(cpu[0], &two);
  CPU_SET(cpu[1], &two);
  CPU_ZERO(&one);
  CPU_SET(cpu[0], &one);
  // How many ranks ended on cpu[0]; another test's processes may take a processor
  // meanwhile and the kernel crowd the ranks again, so up to 3 tries.
  auto on_first = [&]() -> int {
    World w(n);
    auto codes = w.run([&](int rank) {
      SHM_CHECK(::sched_setaffinity(0, sizeof two, &two) == 0, "two processors");
      auto t = w.connect(rank);
      transport::SharedWindows* win = t->shared_windows();
      SHM_CHECK(win != nullptr, "no shared windows");
      SHM_CHECK(::sched_setaffinity(0, sizeof one, &one) == 0, "bind to %d", cpu[0]);
      auto sync = [&](std::uint64_t seq) {
        const int payload = rank;
        Status st = point == Point::kBarrier
                        ? win->barrier(Tag{1, seq, 0}, in_ms(10000))
                        : win->exchange(&payload, sizeof payload, Tag{1, seq, 0}, in_ms(10000));
        SHM_CHECK(st.is_ok(), "seq %llu: %s", static_cast<unsigned long long>(seq),
                  st.to_string().c_str());
      };
      sync(0);  // every rank arrives from cpu[0]
      SHM_CHECK(::sched_setaffinity(0, sizeof two, &two) == 0, "two processors again");
      for (std::uint64_t seq = 1; seq <= 200; ++seq) sync(seq);
      std::ofstream(w.dir + "/cpu." + std::to_string(rank)) << ::sched_getcpu();
    });
    EXPECT_EQ(codes, std::vector<int>(n, 0));
    int first = 0;
    for (int r = 0; r < n; ++r) {
      int at = -1;
      std::ifstream(w.dir + "/cpu." + std::to_string(r)) >> at;
      EXPECT_TRUE(at == cpu[0] || at == cpu[1]) << "rank " << r << " on " << at;
      first += at == cpu[0];
    }
    return first;
  };
  int first = n;
  for (int attempt = 0; attempt < 3 && !HasFailure() && first != n / 2; ++attempt)
    first = on_first();
  EXPECT_EQ(first, n / 2) << "of " << n << " ranks on processors " << cpu[0] << " and "
                          << cpu[1] << ", " << first << " ended on " << cpu[0] << " in 3 tries";
}

INSTANTIATE_TEST_SUITE_P(
    Points, Spread,
    ::testing::Combine(::testing::Values(Point::kBarrier, Point::kExchange), ::testing::Values(2, 4)),
    [](const auto& info) {
      return std::string(std::get<0>(info.param) == Point::kBarrier ? "Barrier" : "Exchange") +
             std::to_string(std::get<1>(info.param)) + "Ranks";
    });

}  // namespace
}  // namespace chorus::shm::testing
