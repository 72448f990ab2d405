// Inside a rank process: the report protocol spoken over the pipe to the parent
// ("@phase <where>" lines, then "@ok" or "@fail <code>" and the message).
#pragma once
#include <functional>

#include "rank_runner.h"

namespace chorus::testing::detail {

// Runs fn in the child with gtest failures intercepted, reports, and _exits.
[[noreturn]] void child_main(int report_fd, RankContext ctx, const std::function<void()>& fn);
// Records where the child is now (shown when it times out).
void phase(const char* where);
// Reports the exception being handled as this rank's failure and _exits.
[[noreturn]] void fail_current_exception_and_exit();
// Reports and _exits when a gtest assertion failed in this child so far.
void fail_if_gtest_failed();

}  // namespace chorus::testing::detail
