// RoutedTransport and GroupView hand the host's shared windows to a group of exactly the
// host's ranks (the intra-host phases of hierarchical algorithms), and to no other group.
#include "transport/routed.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "transport/group_view.h"

namespace chorus::transport {
namespace {

class StubWindows final : public SharedWindows {
 public:
  std::size_t window_bytes() const override { return 4096; }
  void* window(int) override { return nullptr; }
  Status barrier(const Tag&, Deadline) override { return Status::ok(); }
  std::uint64_t barriers() const override { return 0; }
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
