// WorkState: completion once, waiting without spinning, callbacks in order (also those
// added while callbacks run, and on the completing thread waiting on itself).
#include "core/work_state.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace chorus::core {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

TEST(WorkStateTest, FirstCompletionWinsAndWakesWaiters) {
  auto w = std::make_shared<WorkState>(7, "all_reduce");
  EXPECT_FALSE(w->is_complete());
  EXPECT_FALSE(w->wait_until(Clock::now() + milliseconds(20)));
  std::thread t([w] {
    std::this_thread::sleep_for(milliseconds(30));
    w->complete(Status(ErrorCode::kPeerLost, "gone", 3));
  });
  EXPECT_TRUE(w->wait_until(Clock::now() + milliseconds(5000)));
  t.join();
  w->complete(Status::ok());  // ignored
  EXPECT_EQ(w->state(), WorkState::State::kFailed);
  EXPECT_EQ(w->status().code(), ErrorCode::kPeerLost);
  EXPECT_EQ(w->status().peer(), 3);
  EXPECT_EQ(w->seq(), 7);
  EXPECT_STREQ(w->name(), "all_reduce");
}

TEST(WorkStateTest, CallbacksRunInOrderBeforeWaitersWake) {
  auto w = std::make_shared<WorkState>(1, "send");
  std::vector<int> order;
  std::atomic<bool> waiter_saw_all{false};
  for (int i = 0; i < 3; ++i)
    w->on_complete([&order, i](const std::shared_ptr<WorkState>& s) {
      EXPECT_EQ(s->state(), WorkState::State::kDone);
      EXPECT_TRUE(s->is_complete());  // the completing thread may wait on its own Work
      order.push_back(i);
      if (i == 1)  // added while callbacks run: runs after the ones already queued
        s->on_complete([&order](const std::shared_ptr<WorkState>&) { order.push_back(9); });
      std::this_thread::sleep_for(milliseconds(5));
    });
  std::thread waiter([&] {
    w->wait();
    waiter_saw_all = order.size() == 4;
  });
  std::this_thread::sleep_for(milliseconds(10));
  w->complete(Status::ok());
  waiter.join();
  EXPECT_TRUE(waiter_saw_all.load());
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 9}));
  bool ran_now = false;
  w->on_complete([&](const std::shared_ptr<WorkState>&) { ran_now = true; });
  EXPECT_TRUE(ran_now);
}

TEST(WorkStateTest, FailedFactoryIsComplete) {
  auto w = WorkState::failed(4, "recv", Status(ErrorCode::kAborted, "x"));
  EXPECT_TRUE(w->is_complete());
  EXPECT_EQ(w->state(), WorkState::State::kFailed);
}

}  // namespace
}  // namespace chorus::core
