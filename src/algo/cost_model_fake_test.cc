// The cost model's predictions against what the message algorithms measure on the fake
// transport (in-process queues: no probe figures fit it, the defaults price it as TCP).
//
// Tolerance: the median of 5 timed runs of a 1 MiB all_reduce must lie within a factor of
// 100 of the prediction either way. The model ranks algorithms on the host it measured
// (docs/ALGORITHMS.md, "The cost model"); against a transport it has no figures for, and
// on a shared test host, only gross errors (us taken for ns or s, bytes for elements, a
// step count off by orders) are caught. The real transport's counterpart is
// tests/python/test_estimate.py (shm, the probe's figures, the same factor).
#include <algorithm>
#include <chrono>
#include <vector>

#include <gtest/gtest.h>

#include "algo/cost_model.h"
#include "algo/selector.h"
#include "algo/world_for_test.h"

namespace chorus::algo {
namespace {

using test::Bytes;

double median_run_us(CollFn fn, int n, std::size_t count) {
  std::vector<double> runs;
  for (int k = 0; k < 5; ++k) {
    std::vector<Bytes> in(n), out(n);
    for (int r = 0; r < n; ++r) {
      in[r] = test::make_input(DataType::kFloat32, ReduceOp::kSum, r, count);
      out[r] = Bytes(in[r].size());
    }
    const auto t0 = std::chrono::steady_clock::now();
    const auto st = test::run_ranks(n, [&](transport::Transport& t, int r) {
      CollArgs a = test::base_args(DataType::kFloat32, ReduceOp::kSum, count, 1 << 20);
      a.send = in[r].data();
      a.recv = out[r].data();
      return fn(t, a);
    });
    const auto t1 = std::chrono::steady_clock::now();
    for (const Status& s : st) EXPECT_TRUE(s.is_ok()) << s.to_string();
    runs.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  std::nth_element(runs.begin(), runs.begin() + 2, runs.end());
  return runs[2];
}

TEST(CostModelOnFake, MessageAlgorithmsWithinAGrossFactorOfTheirPrediction) {
  constexpr std::size_t kCount = 256 << 10;  // 1 MiB of float32
  const struct {
    const char* name;
    CollFn fn;
  } algos[] = {{"ring", ring_all_reduce}, {"rhd", rhd_all_reduce}, {"tree", tree_all_reduce}};
  for (int n : {2, 4}) {
    for (const auto& a : algos) {
      const double predicted = predict_us(CostParams{}, CollKind::kAllReduce, a.name,
                                          kCount * 4, n, Capabilities{});
      ASSERT_GT(predicted, 0) << a.name << " at " << n;
      const double measured = median_run_us(a.fn, n, kCount);
      EXPECT_LT(measured, 100 * predicted) << a.name << " at " << n << " ranks";
      EXPECT_GT(measured, predicted / 100) << a.name << " at " << n << " ranks";
    }
  }
}

}  // namespace
}  // namespace chorus::algo
