// CommImpl::health_check() and the per-call deadline (set_timeout).
#include <algorithm>
#include <cstdint>

#include "core/comm_impl.h"
#include "util/strings.h"

namespace chorus::core {

namespace {

constexpr int kPattern = 8;

// Element 0 counts the ranks; element i of rank r is (r + 1) * i, so the sum over n
// ranks is i * n (n + 1) / 2.
bool pattern_ok(const std::int64_t* out, int n) {
  if (out[0] != n) return false;
  const std::int64_t tri = static_cast<std::int64_t>(n) * (n + 1) / 2;
  for (int i = 1; i < kPattern; ++i)
    if (out[i] != i * tri) return false;
  return true;
}

}  // namespace

void CommImpl::set_timeout(std::chrono::milliseconds timeout) {
  cfg_.timeout = timeout.count() > 0 ? timeout : configured_timeout_;
}

CommImpl::Health CommImpl::health_check(std::chrono::milliseconds timeout) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  const auto saved = cfg_.timeout;
  if (timeout.count() > 0) cfg_.timeout = timeout;
  Health h;
  std::int64_t in[kPattern], out[kPattern] = {};
  in[0] = 1;
  for (int i = 1; i < kPattern; ++i) in[i] = static_cast<std::int64_t>(rank_ + 1) * i;
  op::CollArgs a;
  a.send = in;
  a.recv = out;
  a.count = kPattern;
  a.dtype = DataType::kInt64;
  a.op = ReduceOp::kSum;
  h.status = run(op::CollKind::kAllReduce, a, "health_check");
  if (h.status.is_ok()) {
    // Every rank verifies its result, then they agree on whether all of them got it right.
    const bool mine_ok = pattern_ok(out, size_);
    if (timeout.count() > 0) {  // both steps share the one deadline
      const auto used = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0);
      cfg_.timeout = std::max(std::chrono::milliseconds(1), timeout - used);
    }
    auto any_bad = agree(!mine_ok);
    if (!any_bad.has_value()) {
      h.status = any_bad.status();
    } else if (*any_bad) {
      h.status = Status(ErrorCode::kInternal,
                        str_printf("rank %d: health_check: %s", rank_,
                                   mine_ok ? "another rank received a wrong all_reduce result"
                                           : "this rank received a wrong all_reduce result"));
    }
  }
  cfg_.timeout = saved;
  if (h.status.is_ok())
    h.ranks_responding = size_;
  else
    h.ranks_responding = h.status.peer() >= 0 ? size_ - 1 : -1;
  h.elapsed = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0);
  return h;
}

}  // namespace chorus::core
