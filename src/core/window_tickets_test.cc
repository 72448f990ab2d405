// WindowTickets: turns pass in ticket order whatever order threads arrive or release in;
// timeouts and stop() end waits.
#include "core/window_tickets.h"

#include <gtest/gtest.h>

#include <mutex>
#include <thread>
#include <vector>

namespace chorus::core {
namespace {

using std::chrono::milliseconds;

TEST(WindowTicketsTest, TurnsFollowTicketOrder) {
  WindowTickets t;
  std::vector<std::uint64_t> tickets;
  for (int i = 0; i < 8; ++i) tickets.push_back(t.take());
  std::mutex mu;
  std::vector<std::uint64_t> ran;
  std::vector<std::thread> threads;
  for (int i = 7; i >= 0; --i) {  // later tickets arrive first
    threads.emplace_back([&, i] {
      ASSERT_EQ(t.wait_turn(tickets[i], Deadline::after(milliseconds(10000))),
                WindowTickets::Wait::kTurn);
      {
        std::lock_guard<std::mutex> g(mu);
        ran.push_back(tickets[i]);
      }
      t.release(tickets[i]);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ran, (std::vector<std::uint64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(WindowTicketsTest, EarlyReleaseKeepsTheOrder) {
  WindowTickets t;
  const auto a = t.take(), b = t.take(), c = t.take();
  t.release(b);  // refused without running
  EXPECT_EQ(t.wait_turn(c, Deadline::after(milliseconds(20))), WindowTickets::Wait::kTimeout);
  EXPECT_EQ(t.wait_turn(a, Deadline::after(milliseconds(20))), WindowTickets::Wait::kTurn);
  t.release(a);
  EXPECT_EQ(t.wait_turn(c, Deadline::after(milliseconds(20))), WindowTickets::Wait::kTurn);
}

TEST(WindowTicketsTest, StopWakesWaiters) {
  WindowTickets t;
  t.take();
  const auto second = t.take();
  std::thread th([&] {
    EXPECT_EQ(t.wait_turn(second, Deadline::never()), WindowTickets::Wait::kStopped);
  });
  std::this_thread::sleep_for(milliseconds(20));
  t.stop();
  th.join();
  EXPECT_EQ(t.wait_turn(0, Deadline::never()), WindowTickets::Wait::kStopped);
}

}  // namespace
}  // namespace chorus::core
