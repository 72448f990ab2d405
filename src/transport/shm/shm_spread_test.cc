// Ranks that the kernel left on one processor while another is free move apart at their
// first wait (spread.cc): two real rank processes get bound to one processor, publish it
// at a window barrier (or a mailbox exchange), get their whole mask back and go on; at the
// end they run on two processors.
#include <sched.h>
#include <unistd.h>

#include <fstream>

#include "transport/shm/test_world.h"

namespace chorus::shm::testing {
namespace {

enum class Point { kBarrier, kExchange };

class Spread : public ::testing::TestWithParam<Point> {};

TEST_P(Spread, RanksOnOneProcessorWithAnotherFreeMoveApart) {
  cpu_set_t mask;
  ASSERT_EQ(::sched_getaffinity(0, sizeof mask, &mask), 0);
  if (CPU_COUNT(&mask) < 2) GTEST_SKIP() << "needs two processors, has " << CPU_COUNT(&mask);
  int first = 0;
  while (!CPU_ISSET(first, &mask)) ++first;
  const Point point = GetParam();
  // Where the two ranks were after their last wait; another test's processes may take a
  // processor meanwhile and the kernel put the two together again, so up to 3 tries.
  auto ended_on = [&]() -> std::pair<int, int> {
    World w(2);
    auto codes = w.run([&](int rank) {
      auto t = w.connect(rank);  // with the whole mask: a processor per rank
      transport::SharedWindows* win = t->shared_windows();
      SHM_CHECK(win != nullptr, "no shared windows");
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(first, &one);
      SHM_CHECK(::sched_setaffinity(0, sizeof one, &one) == 0, "bind to processor %d", first);
      auto sync = [&](std::uint64_t seq) {
        const int payload = rank;
        Status st = point == Point::kBarrier
                        ? win->barrier(Tag{1, seq, 0}, in_ms(10000))
                        : win->exchange(&payload, sizeof payload, Tag{1, seq, 0}, in_ms(10000));
        SHM_CHECK(st.is_ok(), "seq %llu: %s", static_cast<unsigned long long>(seq),
                  st.to_string().c_str());
      };
      sync(0);  // both arrive from `first`
      SHM_CHECK(::sched_setaffinity(0, sizeof mask, &mask) == 0, "restore the mask");
      for (std::uint64_t seq = 1; seq <= 200; ++seq) sync(seq);
      std::ofstream(w.dir + "/cpu." + std::to_string(rank)) << ::sched_getcpu();
    });
    EXPECT_EQ(codes, (std::vector<int>{0, 0}));
    int cpu[2] = {-1, -1};
    for (int r = 0; r < 2; ++r) std::ifstream(w.dir + "/cpu." + std::to_string(r)) >> cpu[r];
    return {cpu[0], cpu[1]};
  };
  std::pair<int, int> cpus;
  for (int attempt = 0; attempt < 3; ++attempt) {
    cpus = ended_on();
    if (HasFailure() || cpus.first != cpus.second) break;
  }
  EXPECT_GE(cpus.first, 0);
  EXPECT_NE(cpus.first, cpus.second) << "both ranks ended on processor " << cpus.first
                                     << " in 3 tries";
}

INSTANTIATE_TEST_SUITE_P(Points, Spread, ::testing::Values(Point::kBarrier, Point::kExchange),
                         [](const auto& info) {
                           return info.param == Point::kBarrier ? "Barrier" : "Exchange";
                         });

}  // namespace
}  // namespace chorus::shm::testing
