// The rank-process side of RankRunner: intercepts gtest failures, catches exceptions and
// writes the outcome to the report pipe, then leaves with _exit (never into gtest).
#include "child_report.h"

#include <gtest/gtest-spi.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>
#include <string>

namespace chorus::testing {
namespace {

RankContext g_ctx;
int g_fd = -1;
std::string g_step;
::testing::TestPartResultArray* g_gtest_results = nullptr;

void write_all(const std::string& s) {
  std::size_t off = 0;
  while (off < s.size()) {
    ssize_t n = write(g_fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    off += static_cast<std::size_t>(n);
  }
}

[[noreturn]] void finish(bool ok, int code, const std::string& message) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::string text = message;
  if (!ok && !g_step.empty()) text += "\n  during: " + g_step;
  write_all(ok ? std::string("@ok\n") : "@fail " + std::to_string(code) + "\n" + text);
  _exit(ok ? 0 : 1);
}

std::string gtest_failures() {
  std::string s;
  if (!g_gtest_results) return s;
  for (int i = 0; i < g_gtest_results->size(); ++i) {
    const auto& r = g_gtest_results->GetTestPartResult(i);
    if (!r.failed()) continue;
    if (!s.empty()) s += "\n";
    s += std::string(r.file_name() ? r.file_name() : "?") + ":" + std::to_string(r.line_number()) +
         ": " + r.message();
  }
  return s;
}

}  // namespace

const RankContext& this_rank() { return g_ctx; }

void step(const std::string& what) {
  g_step = what;
  write_all("@phase " + what + "\n");
}

namespace detail {

void phase(const char* where) { step(where); }

void fail_current_exception_and_exit() {
  std::string prior = gtest_failures();
  std::string extra = prior.empty() ? "" : "\n(and gtest failures: " + prior + ")";
  try {
    throw;
  } catch (const Error& e) {
    finish(false, static_cast<int>(e.code()), std::string("chorus::Error ") + e.what() + extra);
  } catch (const CheckFailure& e) {
    finish(false, -1, e.what() + extra);
  } catch (const std::exception& e) {
    finish(false, -1, std::string("exception: ") + e.what() + extra);
  } catch (...) {
    finish(false, -1, "unknown exception" + extra);
  }
}

void fail_if_gtest_failed() {
  std::string s = gtest_failures();
  if (!s.empty()) finish(false, -1, s);
}

void child_main(int report_fd, RankContext ctx, const std::function<void()>& fn) {
  g_fd = report_fd;
  g_ctx = std::move(ctx);
  // Leaked on purpose: the process ends with _exit.
  g_gtest_results = new ::testing::TestPartResultArray;
  new ::testing::ScopedFakeTestPartResultReporter(
      ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ALL_THREADS, g_gtest_results);
  try {
    fn();
  } catch (...) {
    fail_current_exception_and_exit();
  }
  fail_if_gtest_failed();
  finish(true, 0, "");
}

}  // namespace detail
}  // namespace chorus::testing
