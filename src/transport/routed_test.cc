// RoutedTransport and GroupView hand the host's shared windows to a group of exactly the
// host's ranks (the intra-host phases of hierarchical algorithms), and to no other group.
#include "transport/routed.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "transport/group_view.h"

namespace chorus::transport {
namespace {

// Windows whose barriers count their calls; the first `slices_out` of them wait out their
// deadline (the routed barrier's slice) and time out, as a barrier a peer is late for.
class StubWindows final : public SharedWindows {
 public:
  std::size_t window_bytes() const override { return 4096; }
  void* window(int) override { return nullptr; }
  Status barrier(const Tag&, Deadline deadline) override {
    ++plain;
    return finish(deadline);
  }
  Status barrier_meanwhile(const Tag&, Deadline deadline,
                           util::FunctionRef<void()> meanwhile) override {
    ++with_work;
    meanwhile();
    return finish(deadline);
  }
  std::uint64_t barriers() const override { return 0; }

  int slices_out = 0, plain = 0, with_work = 0;

 private:
  Status finish(Deadline deadline) {
    if (slices_out == 0) return Status::ok();
    --slices_out;
    while (!deadline.expired()) std::this_thread::yield();
    return Status(ErrorCode::kTimeout, "stub: slice over");
  }
};

// A transport that moves nothing: rank and size, and windows when given some.
class StubTransport final : public Transport {
 public:
  StubTransport(int rank, int size, SharedWindows* windows)
      : rank_(rank), size_(size), windows_(windows) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override { return "stub"; }
  Result<RequestPtr> post_send(int, Tag, const void*, std::size_t) override {
    return Status(ErrorCode::kNotSupported, "stub");
  }
  Result<RequestPtr> post_recv(int, Tag, void*, std::size_t) override {
    return Status(ErrorCode::kNotSupported, "stub");
  }
  Status wait(std::span<Request* const>, Deadline) override { return Status::ok(); }
  void abort(const Status&) override {}
  SharedWindows* shared_windows() override { return windows_; }

 private:
  int rank_, size_;
  SharedWindows* windows_;
};

// Job rank 2 of 5 on hosts {0, 1, 0, 1, 0}: its host holds ranks 0, 2 and 4.
struct Routed {
  StubWindows windows;
  RoutedTransport t{std::make_unique<StubTransport>(1, 3, &windows), {0, 2, 4},
                    std::make_unique<StubTransport>(2, 5, nullptr), {0, 1, 0, 1, 0}};
};

TEST(RoutedWindows, TheHostGroupGetsTheNearTransportsWindows) {
  Routed r;
  EXPECT_EQ(r.t.shared_windows(), nullptr);  // all ranks span two hosts
  const std::vector<int> host = {0, 2, 4};
  SharedWindows* w = r.t.group_windows(host);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->window_bytes(), r.windows.window_bytes());
  GroupView view(r.t, host);
  EXPECT_EQ(view.shared_windows(), w);
}

// The host windows' barrier waits in slices; work given to barrier_meanwhile goes to the
// near windows' own barrier_meanwhile (run after this rank's arrival there) in the first
// slice, and only there: the later slices enter the same barrier again without it.
TEST(RoutedWindows, WorkMeanwhileRunsOnceInTheFirstSlice) {
  Routed r;
  SharedWindows* w = r.t.group_windows(std::vector<int>{0, 2, 4});
  ASSERT_NE(w, nullptr);
  r.windows.slices_out = 2;
  int runs = 0;
  Status st = w->barrier_meanwhile(Tag{1, 1, 0}, Deadline::after(std::chrono::seconds(10)),
                                   [&] { ++runs; });
  EXPECT_TRUE(st.is_ok()) << st.to_string();
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(r.windows.with_work, 1);
  EXPECT_EQ(r.windows.plain, 2);
  // A plain barrier stays plain.
  EXPECT_TRUE(w->barrier(Tag{1, 2, 0}, Deadline::after(std::chrono::seconds(10))).is_ok());
  EXPECT_EQ(r.windows.with_work, 1);
  EXPECT_EQ(r.windows.plain, 3);
}

TEST(RoutedWindows, OtherGroupsGetNone) {
  Routed r;
  for (const std::vector<int>& g : {std::vector<int>{0, 2}, std::vector<int>{2, 3},
                                    std::vector<int>{0, 1, 2, 3, 4}, std::vector<int>{0, 2, 4, 3}}) {
    EXPECT_EQ(r.t.group_windows(g), nullptr);
  }
  GroupView across(r.t, {1, 2});
  EXPECT_EQ(across.shared_windows(), nullptr);
}

TEST(RoutedWindows, ATransportOfOneHostGivesItsWindowsToTheWholeGroupOnly) {
  StubWindows w;
  StubTransport t(0, 3, &w);
  EXPECT_EQ(t.group_windows(std::vector<int>{0, 1, 2}), &w);
  EXPECT_EQ(t.group_windows(std::vector<int>{0, 1}), nullptr);
  GroupView view(t, {0, 1, 2});
  EXPECT_EQ(view.shared_windows(), &w);
}

}  // namespace
}  // namespace chorus::transport
