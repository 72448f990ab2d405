// Bucketer on 2 and 4 real ranks: many mixed tensors packed into buckets, started as
// their buckets complete (before finish()), results exact (uncompressed and, for values
// exactly representable in 16 bits, compressed), compression error within its bound,
// and misuse refused with kInvalidArgument.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "chorus/bucketer.h"
#include "rank_runner.h"

namespace chorus::mp {
namespace {

using chorus::testing::check;
using chorus::testing::expect_error;
using chorus::testing::RankRunner;

constexpr auto kDeadline = std::chrono::seconds(120);

// 200 tensors of mixed sizes: mostly float32, some float64 and int64 in between.
struct Model {
  std::vector<std::vector<float>> f32;
  std::vector<std::vector<double>> f64;
  std::vector<std::vector<std::int64_t>> i64;
  std::vector<std::pair<char, std::size_t>> order;  // (type, index) in registration order

  explicit Model(int tensors) {
    for (int t = 0; t < tensors; ++t) {
      const std::size_t count = 1 + static_cast<std::size_t>((t * 7919) % 20000);
      if (t % 17 == 5) {
        order.push_back({'d', f64.size()});
        f64.emplace_back(count);
      } else if (t % 23 == 7) {
        order.push_back({'i', i64.size()});
        i64.emplace_back(count);
      } else {
        order.push_back({'f', f32.size()});
        f32.emplace_back(count);
      }
    }
  }

  // Small integers (exact in fp16 and bf16 sums over a few ranks).
  static double value(int rank, int iter, std::size_t t, std::size_t i) {
    return static_cast<double>((rank * 3 + iter * 5 + t * 7 + i) % 9);
  }

  void fill(int rank, int iter) {
    for (std::size_t k = 0; k < order.size(); ++k) {
      auto [type, idx] = order[k];
      auto set = [&](auto& vec) {
        for (std::size_t i = 0; i < vec[idx].size(); ++i)
          vec[idx][i] = static_cast<std::remove_reference_t<decltype(vec[idx][i])>>(
              value(rank, iter, k, i));
      };
      if (type == 'f') set(f32);
      else if (type == 'd') set(f64);
      else set(i64);
    }
  }

  void check_sum(int n, int iter) const {
    for (std::size_t k = 0; k < order.size(); ++k) {
      auto [type, idx] = order[k];
      const std::size_t count = type == 'f' ? f32[idx].size() : type == 'd' ? f64[idx].size()
                                                                             : i64[idx].size();
      for (std::size_t i = 0; i < count; ++i) {
        double want = 0;
        for (int r = 0; r < n; ++r) want += value(r, iter, k, i);
        const double got = type == 'f' ? f32[idx][i] : type == 'd' ? f64[idx][i]
                                                                    : static_cast<double>(i64[idx][i]);
        if (got != want)
          check(false, "tensor " + std::to_string(k) + " element " + std::to_string(i) +
                           ": expected " + std::to_string(want) + ", got " + std::to_string(got));
      }
    }
  }

  std::vector<std::size_t> register_all(Bucketer& b) {
    std::vector<std::size_t> ids;
    for (auto [type, idx] : order) {
      if (type == 'f') ids.push_back(b.add(f32[idx].data(), f32[idx].size(), DataType::kFloat32));
      else if (type == 'd') ids.push_back(b.add(f64[idx].data(), f64[idx].size(), DataType::kFloat64));
      else ids.push_back(b.add(i64[idx].data(), i64[idx].size(), DataType::kInt64));
    }
    return ids;
  }
};

class BucketerRanks : public ::testing::TestWithParam<int> {};

void exact_run(Communicator& comm, Compression compression) {
  Model model(200);
  BucketerOptions opts;
  opts.bucket_bytes = 256 << 10;  // several buckets
  opts.compression = compression;
  Bucketer bucketer(comm, opts);
  auto ids = model.register_all(bucketer);
  check(bucketer.num_buckets() > 5, "expected several buckets, got " +
                                        std::to_string(bucketer.num_buckets()));
  for (int iter = 0; iter < 3; ++iter) {
    model.fill(comm.rank(), iter);
    // Gradients become ready in reverse order, like a backward pass; each rank also
    // skips a different tensor, which finish() then marks.
    for (std::size_t k = ids.size(); k-- > 0;)
      if (static_cast<int>(k % 50) != comm.rank()) bucketer.mark_ready(ids[k]);
    bucketer.finish();
    model.check_sum(comm.size(), iter);
  }
}

TEST_P(BucketerRanks, ExactSumsUncompressed) {
  EXPECT_TRUE(chorus::testing::all_ok(RankRunner::run(
      GetParam(), [](Communicator& comm) { exact_run(comm, Compression::kNone); }, kDeadline)));
}

TEST_P(BucketerRanks, ExactSumsCompressedFp16AndBf16) {
  EXPECT_TRUE(chorus::testing::all_ok(RankRunner::run(
      GetParam(),
      [](Communicator& comm) {
        exact_run(comm, Compression::kFloat16);
        exact_run(comm, Compression::kBfloat16);
      },
      kDeadline)));
}

// Values not representable in 16 bits: the averaged result stays within the documented
// relative error, and every rank holds the same bits.
TEST_P(BucketerRanks, CompressionErrorWithinBound) {
  auto body = [](Communicator& comm) {
    for (Compression c : {Compression::kFloat16, Compression::kBfloat16}) {
      const int n = comm.size();
      std::vector<float> grad(100000);
      auto input = [](int r, std::size_t i) {
        return static_cast<float>(std::sin(0.001 * static_cast<double>(i) + r) * 3.0 + 0.1);
      };
      for (std::size_t i = 0; i < grad.size(); ++i) grad[i] = input(comm.rank(), i);
      BucketerOptions opts;
      opts.compression = c;
      opts.op = ReduceOp::kAvg;
      Bucketer bucketer(comm, opts);
      bucketer.add(grad.data(), grad.size(), DataType::kFloat32);
      bucketer.finish();
      const double unit = c == Compression::kFloat16 ? std::ldexp(1.0, -11) : std::ldexp(1.0, -8);
      for (std::size_t i = 0; i < grad.size(); ++i) {
        double want = 0;
        for (int r = 0; r < n; ++r) want += input(r, i);
        want /= n;
        // Each rank's input and every combining step round once; the magnitudes are <= 3.1.
        const double bound = (n + 1) * unit * 3.2;
        if (std::fabs(grad[i] - want) > bound)
          check(false, "element " + std::to_string(i) + ": " + std::to_string(grad[i]) +
                           " is further than " + std::to_string(bound) + " from " +
                           std::to_string(want));
      }
      std::vector<float> first(grad.size());
      comm.broadcast(grad.data(), first.data(), grad.size(), DataType::kFloat32, 0);
      check(first == grad, "ranks hold different results");
    }
  };
  EXPECT_TRUE(chorus::testing::all_ok(RankRunner::run(GetParam(), body, kDeadline)));
}

// A bucket's all_reduce starts as soon as the bucket is complete, before finish().
TEST_P(BucketerRanks, BucketStartsBeforeFinish) {
  auto body = [](Communicator& comm) {
    std::vector<float> a(1000, 1.0f), b(1000, 2.0f), c(1000, 3.0f);
    BucketerOptions opts;
    opts.bucket_bytes = 4000;  // one tensor per bucket
    Bucketer bucketer(comm, opts);
    bucketer.add(a.data(), a.size(), DataType::kFloat32);
    bucketer.add(b.data(), b.size(), DataType::kFloat32);
    bucketer.add(c.data(), c.size(), DataType::kFloat32);
    check(bucketer.num_buckets() == 3, "expected 3 buckets");
    const auto count_all_reduces = [&] {
      const std::string rec = comm.flight_record();
      std::size_t n = 0;
      for (std::size_t p = rec.find("all_reduce"); p != std::string::npos;
           p = rec.find("all_reduce", p + 1))
        ++n;
      return n;
    };
    bucketer.mark_ready(1);  // bucket 1 complete, but bucket 0 has not started
    check(count_all_reduces() == 0, "a bucket started before the buckets ahead of it");
    bucketer.mark_ready(0);  // buckets 0 and 1 start now
    check(count_all_reduces() == 2, "buckets 0 and 1 did not start at mark_ready");
    bucketer.finish();
    const float n = static_cast<float>(comm.size());
    check(a[0] == n && b[999] == 2 * n && c[500] == 3 * n, "wrong sums");
  };
  EXPECT_TRUE(chorus::testing::all_ok(RankRunner::run(GetParam(), body, kDeadline)));
}

// bucket_bytes = 0: chosen from the cost model's estimate, a power of two from 64 KiB, the
// same on every rank (the model's parameters are agreed at init), and it works.
TEST_P(BucketerRanks, AutoBucketSize) {
  auto body = [](Communicator& comm) {
    BucketerOptions automatic;
    automatic.bucket_bytes = 0;
    Bucketer bucketer(comm, automatic);
    const std::size_t b = bucketer.bucket_bytes();
    check(b >= (64u << 10) && (b & (b - 1)) == 0, "bucket_bytes " + std::to_string(b));
    double mine = static_cast<double>(b), lo = 0, hi = 0;
    comm.all_reduce(&mine, &lo, 1, DataType::kFloat64, ReduceOp::kMin);
    comm.all_reduce(&mine, &hi, 1, DataType::kFloat64, ReduceOp::kMax);
    check(lo == hi, "ranks chose different bucket sizes");
    std::vector<float> a(1000, 1.0f);
    bucketer.add(a.data(), a.size(), DataType::kFloat32);
    bucketer.finish();
    check(a[999] == static_cast<float>(comm.size()), "wrong sum");
    check(Bucketer(comm).bucket_bytes() == (25u << 20), "the default is not 25 MiB");
  };
  EXPECT_TRUE(chorus::testing::all_ok(RankRunner::run(GetParam(), body, kDeadline)));
}

TEST_P(BucketerRanks, MisuseIsRefused) {
  auto body = [](Communicator& comm) {
    std::vector<float> a(10, 1.0f);
    Bucketer bucketer(comm);
    expect_error(ErrorCode::kInvalidArgument,
                 [&] { bucketer.add(nullptr, 10, DataType::kFloat32); }, "data");
    expect_error(ErrorCode::kInvalidArgument,
                 [&] { bucketer.add(a.data(), 0, DataType::kFloat32); }, "count");
    expect_error(ErrorCode::kInvalidArgument,
                 [&] { bucketer.add(a.data(), 10, static_cast<DataType>(99)); }, "dtype");
    bucketer.add(a.data(), a.size(), DataType::kFloat32);
    expect_error(ErrorCode::kInvalidArgument, [&] { bucketer.mark_ready(1); }, "index 1");
    bucketer.mark_ready(0);
    expect_error(ErrorCode::kInvalidArgument, [&] { bucketer.mark_ready(0); }, "already");
    expect_error(ErrorCode::kInvalidArgument,
                 [&] { bucketer.add(a.data(), 10, DataType::kFloat32); }, "first mark_ready");
    bucketer.finish();
    check(a[0] == static_cast<float>(comm.size()), "wrong sum after misuse");
  };
  EXPECT_TRUE(chorus::testing::all_ok(RankRunner::run(GetParam(), body, kDeadline)));
}

INSTANTIATE_TEST_SUITE_P(Ranks, BucketerRanks, ::testing::Values(2, 4),
                         [](const auto& info) { return "n" + std::to_string(info.param); });

}  // namespace
}  // namespace chorus::mp
