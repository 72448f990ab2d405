// StreamQueue: tasks run one at a time in push order on one worker thread; wait_idle()
// and stop() drain the queue.
#include "core/stream_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace chorus::core {
namespace {

struct FnTask : StreamTask {
  explicit FnTask(std::function<void()> f) : fn(std::move(f)) {}
  void run() override { fn(); }
  std::function<void()> fn;
};

TEST(StreamQueueTest, RunsInOrderOneAtATimeOnOneThread) {
  StreamQueue q(3, "dp");
  EXPECT_EQ(q.outstanding(), 0u);
  q.wait_idle();  // no worker yet
  std::mutex mu;
  std::vector<int> order;
  std::atomic<int> running{0}, max_running{0};
  std::vector<std::thread::id> threads;
  for (int i = 0; i < 50; ++i) {
    q.push(std::make_unique<FnTask>([&, i] {
      const int now = ++running;
      int seen = max_running.load();
      while (now > seen && !max_running.compare_exchange_weak(seen, now)) {}
      std::this_thread::sleep_for(std::chrono::microseconds(100));
      {
        std::lock_guard<std::mutex> g(mu);
        order.push_back(i);
        threads.push_back(std::this_thread::get_id());
      }
      --running;
    }));
  }
  q.wait_idle();
  EXPECT_EQ(q.outstanding(), 0u);
  ASSERT_EQ(order.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(order[i], i);
  EXPECT_EQ(max_running.load(), 1);
  for (auto id : threads) EXPECT_EQ(id, threads[0]);
  EXPECT_NE(threads[0], std::this_thread::get_id());
}

TEST(StreamQueueTest, StopRunsWhatIsQueued) {
  std::atomic<int> ran{0};
  {
    StreamQueue q(1, "x");
    for (int i = 0; i < 10; ++i) q.push(std::make_unique<FnTask>([&] { ++ran; }));
  }  // destructor: stop()
  EXPECT_EQ(ran.load(), 10);
}

TEST(StreamQueueTest, LabelIsOneDumpToken) {
  EXPECT_STREQ(StreamQueue(2, "tp").label(), "tp");
  EXPECT_STREQ(StreamQueue(2, "a b=c\n").label(), "a_b_c_");
  EXPECT_STREQ(StreamQueue(4, "").label(), "stream4");
  EXPECT_EQ(StreamQueue(4, "a b").name(), "a b");
}

}  // namespace
}  // namespace chorus::core
