// Tests of the file store: the Store semantics, odd keys, timeouts, and atomic add from
// threads and from forked processes.
#include "bootstrap/file_store.h"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

namespace chorus::bootstrap {
namespace {

using namespace std::chrono_literals;

Bytes b(const std::string& s) { return Bytes(s.begin(), s.end()); }
std::string s(const Bytes& v) { return std::string(v.begin(), v.end()); }

class FileStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/chorus_file_store_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto st = open_file_store(dir_ + "/store/nested");
    ASSERT_TRUE(st) << st.status().to_string();
    store_ = st.value();
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string dir_;
  std::shared_ptr<Store> store_;
};

TEST_F(FileStoreTest, SetGetAddCheckWait) {
  ASSERT_TRUE(store_->set("a", b("hello")).is_ok());
  EXPECT_EQ(s(store_->get("a", Deadline::after(1s)).value()), "hello");
  ASSERT_TRUE(store_->set("a", b("again")).is_ok());
  EXPECT_EQ(s(store_->get("a", Deadline::after(1s)).value()), "again");
  EXPECT_EQ(store_->add("n", 4).value(), 4);
  EXPECT_EQ(store_->add("n", -1).value(), 3);
  EXPECT_EQ(s(store_->get("n", Deadline::after(1s)).value()), "3");
  EXPECT_TRUE(store_->check("a").value());
  EXPECT_FALSE(store_->check("b").value());
  EXPECT_TRUE(store_->wait({"a", "n"}, Deadline::after(1s)).is_ok());
}

TEST_F(FileStoreTest, OddKeysAreDistinctFiles) {
  const std::vector<std::string> keys = {"x/y", "x%2Fy", "../up", "", ".hidden", "sp ace",
                                         std::string(300, 'k'), std::string(300, 'k') + "2"};
  for (std::size_t i = 0; i < keys.size(); ++i)
    ASSERT_TRUE(store_->set(keys[i], b(std::to_string(i))).is_ok()) << keys[i];
  for (std::size_t i = 0; i < keys.size(); ++i)
    EXPECT_EQ(s(store_->get(keys[i], Deadline::after(1s)).value()), std::to_string(i)) << keys[i];
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/store/up"));
}

TEST_F(FileStoreTest, GetWaitsForLaterSet) {
  std::thread t([&] {
    std::this_thread::sleep_for(50ms);
    EXPECT_TRUE(store_->set("late", b("v")).is_ok());
  });
  auto v = store_->get("late", Deadline::after(5s));
  t.join();
  ASSERT_TRUE(v) << v.status().to_string();
  EXPECT_EQ(s(*v), "v");
}

TEST_F(FileStoreTest, TimeoutsNameTheKey) {
  auto start = std::chrono::steady_clock::now();
  auto v = store_->get("nope", Deadline::after(50ms));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
  ASSERT_FALSE(v);
  EXPECT_EQ(v.status().code(), ErrorCode::kTimeout);
  EXPECT_NE(v.status().message().find("'nope'"), std::string::npos);
  ASSERT_TRUE(store_->set("k0", b("")).is_ok());
  Status w = store_->wait({"k0", "k1"}, Deadline::after(50ms));
  EXPECT_EQ(w.code(), ErrorCode::kTimeout);
  EXPECT_NE(w.message().find("'k1'"), std::string::npos) << w.message();
}

TEST_F(FileStoreTest, AddOnNonCounterIsInvalidArgument) {
  ASSERT_TRUE(store_->set("t", b("abc")).is_ok());
  EXPECT_EQ(store_->add("t", 1).status().code(), ErrorCode::kInvalidArgument);
}

TEST_F(FileStoreTest, ConcurrentAddFromThreads) {
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      for (int k = 0; k < 50; ++k) EXPECT_TRUE(store_->add("c", 1));
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(store_->add("c", 0).value(), 200);
}

TEST_F(FileStoreTest, ConcurrentAddFromProcesses) {
  constexpr int kProcs = 4, kAdds = 50;
  std::vector<pid_t> kids;
  for (int p = 0; p < kProcs; ++p) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      auto st = open_file_store(dir_ + "/store/nested");  // each process opens its own
      int bad = st ? 0 : 1;
      for (int k = 0; st && k < kAdds; ++k) bad += (*st)->add("c", 1) ? 0 : 1;
      ::_exit(bad == 0 ? 0 : 1);
    }
    kids.push_back(pid);
  }
  for (pid_t pid : kids) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  EXPECT_EQ(store_->add("c", 0).value(), kProcs * kAdds);
}

TEST(FileStoreOpen, NotADirectoryIsIo) {
  EXPECT_EQ(open_file_store("/dev/null/x").status().code(), ErrorCode::kIo);
  EXPECT_EQ(open_file_store("").status().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace chorus::bootstrap
