// Tests of store_all_gather (over the TCP and file stores, one thread per rank) and of
// PrefixStore.
#include <chrono>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "bootstrap/file_store.h"
#include "bootstrap/store.h"
#include "bootstrap/tcp_store.h"

namespace chorus::bootstrap {
namespace {

using namespace std::chrono_literals;

Bytes b(const std::string& s) { return Bytes(s.begin(), s.end()); }
std::string s(const Bytes& v) { return std::string(v.begin(), v.end()); }

// Runs an all-gather of "v<rank>" over `size` threads, each with its own store handle.
void run_all_gather(const std::function<std::shared_ptr<Store>()>& open, int size) {
  std::vector<Result<std::vector<Bytes>>> results(size, Status(ErrorCode::kInternal, "not run"));
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r)
    threads.emplace_back([&, r] {
      auto st = open();
      results[r] = store_all_gather(*st, "ag", r, size, b("v" + std::to_string(r)), Deadline::after(5s));
    });
  for (auto& t : threads) t.join();
  for (int r = 0; r < size; ++r) {
    ASSERT_TRUE(results[r]) << "rank " << r << ": " << results[r].status().to_string();
    ASSERT_EQ(static_cast<int>(results[r]->size()), size);
    for (int q = 0; q < size; ++q) EXPECT_EQ(s((*results[r])[q]), "v" + std::to_string(q));
  }
}

TEST(StoreAllGather, OverTcpStore) {
  auto server = TcpStoreServer::start("127.0.0.1", 0);
  ASSERT_TRUE(server);
  int port = (*server)->port();
  run_all_gather([port] { return connect_tcp_store("127.0.0.1", port, Deadline::after(5s)).value(); }, 7);
}

TEST(StoreAllGather, OverFileStore) {
  char tmpl[] = "/tmp/chorus_ag_XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  std::string dir = tmpl;
  run_all_gather([dir] { return open_file_store(dir).value(); }, 5);
  std::filesystem::remove_all(dir);
}

TEST(StoreAllGather, SingleRankAndBadArguments) {
  auto server = TcpStoreServer::start("127.0.0.1", 0);
  ASSERT_TRUE(server);
  auto st = connect_tcp_store("127.0.0.1", (*server)->port(), Deadline::after(5s)).value();
  auto one = store_all_gather(*st, "solo", 0, 1, b("x"), Deadline::after(1s));
  ASSERT_TRUE(one);
  EXPECT_EQ(s((*one)[0]), "x");
  EXPECT_EQ(store_all_gather(*st, "n", 2, 2, b(""), Deadline::after(1s)).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(store_all_gather(*st, "n", 0, 0, b(""), Deadline::after(1s)).status().code(),
            ErrorCode::kInvalidArgument);
  auto missing = store_all_gather(*st, "partial", 0, 3, b(""), Deadline::after(100ms));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.status().code(), ErrorCode::kTimeout);
  EXPECT_EQ(missing.status().peer(), 1);
  EXPECT_NE(missing.status().message().find("partial/1"), std::string::npos) << missing.status().message();
}

TEST(PrefixStore, KeysAreIsolatedAndVisibleInBase) {
  char tmpl[] = "/tmp/chorus_prefix_XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  auto base = open_file_store(tmpl).value();
  PrefixStore a(base, "a"), bb(base, "b");
  ASSERT_TRUE(a.set("k", b("1")).is_ok());
  ASSERT_TRUE(bb.set("k", b("2")).is_ok());
  EXPECT_EQ(s(a.get("k", Deadline::after(1s)).value()), "1");
  EXPECT_EQ(s(bb.get("k", Deadline::after(1s)).value()), "2");
  EXPECT_EQ(s(base->get("a/k", Deadline::after(1s)).value()), "1");
  EXPECT_EQ(a.add("n", 2).value(), 2);
  EXPECT_FALSE(bb.check("n").value());
  EXPECT_TRUE(a.wait({"k", "n"}, Deadline::after(1s)).is_ok());
  Status w = bb.wait({"k", "n"}, Deadline::after(50ms));
  EXPECT_EQ(w.code(), ErrorCode::kTimeout);
  EXPECT_NE(w.message().find("b/n"), std::string::npos) << w.message();
  std::filesystem::remove_all(tmpl);
}

}  // namespace
}  // namespace chorus::bootstrap
