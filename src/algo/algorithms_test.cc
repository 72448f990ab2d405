// Reduction algorithms (all_reduce x {ring, rhd, rd, tree}, reduce_scatter x {ring, rh}, reduce) over the
// fake transport, every rank count x count x dtype/op x in-place mode, against a local
// reference; every rank's bytes must equal the reference (hence each other).
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "algo/algorithm.h"
#include "algo/world_for_test.h"

namespace chorus::algo::test {
namespace {

struct Variant {
  DataType dt;
  ReduceOp op;
};

// Every dtype with sum, every op on float32 and int32, avg on other integers; the
// largest count runs a representative subset to keep the suite fast.
std::vector<Variant> variants(std::size_t count) {
  if (count >= 100000) {
    return {{DataType::kFloat32, ReduceOp::kSum}, {DataType::kInt32, ReduceOp::kAvg},
            {DataType::kFloat16, ReduceOp::kSum}, {DataType::kFloat64, ReduceOp::kMax}};
  }
  std::vector<Variant> v;
  for (int d = 0; d < kNumDataTypes; ++d) v.push_back({static_cast<DataType>(d), ReduceOp::kSum});
  for (int o = 1; o < kNumReduceOps; ++o) {
    v.push_back({DataType::kFloat32, static_cast<ReduceOp>(o)});
    v.push_back({DataType::kInt32, static_cast<ReduceOp>(o)});
  }
  v.push_back({DataType::kInt8, ReduceOp::kAvg});
  v.push_back({DataType::kUint64, ReduceOp::kAvg});
  v.push_back({DataType::kBfloat16, ReduceOp::kAvg});
  return v;
}



std::string where(DataType dt, ReduceOp op, int mode, int rank) {
  return "dtype " + std::to_string(static_cast<int>(dt)) + " op " +
         std::to_string(static_cast<int>(op)) + " mode " + std::to_string(mode) + " rank " +
         std::to_string(rank);
}




// all_reduce: mode 0 out of place, 1 in place.
void check_all_reduce(CollFn fn, int n, std::size_t count) {
  for (const Variant& v : variants(count)) {
    for (int mode = 0; mode < 2; ++mode) {
      std::vector<Bytes> in(n), out(n);
      const std::size_t bytes = count * kernels::element_size(v.dt);
      for (int r = 0; r < n; ++r) {
        in[r] = make_input(v.dt, v.op, r, count);
        out[r] = mode ? in[r] : Bytes(bytes, 0xcd);
      }
      auto st = run_ranks(n, [&](transport::Transport& t, int r) {
        CollArgs a = base_args(v.dt, v.op, count, chunk_for(count));
        a.send = mode ? out[r].data() : in[r].data();
        a.recv = out[r].data();
        return fn(t, a);
      });
      expect_all_ok(st);
      const Bytes want = reference(in, v.dt, v.op, count);
      for (int r = 0; r < n; ++r) ASSERT_TRUE(same(out[r], want)) << where(v.dt, v.op, mode, r);
      for (int r = 1; r < n; ++r) ASSERT_TRUE(same(out[r], out[0])) << "bit-identical, rank " << r;
    }
  }
}

class AllReduce : public ::testing::TestWithParam<Param> {};
TEST_P(AllReduce, Ring) { check_all_reduce(ring_all_reduce, std::get<0>(GetParam()), std::get<1>(GetParam())); }
TEST_P(AllReduce, Rhd) { check_all_reduce(rhd_all_reduce, std::get<0>(GetParam()), std::get<1>(GetParam())); }
TEST_P(AllReduce, Rd) { check_all_reduce(rd_all_reduce, std::get<0>(GetParam()), std::get<1>(GetParam())); }
TEST_P(AllReduce, Tree) { check_all_reduce(tree_all_reduce, std::get<0>(GetParam()), std::get<1>(GetParam())); }
INSTANTIATE_TEST_SUITE_P(Algo, AllReduce,
                         ::testing::Combine(::testing::ValuesIn(kRanks), ::testing::ValuesIn(kCounts)),
                         param_name);

// reduce_scatter: mode 0 out of place, 1 recv == send + rank * count, 2 recv == send.
void check_reduce_scatter(Status (*fn)(transport::Transport&, const CollArgs&), int n,
                          std::size_t total) {
  const std::size_t count = per_rank(total, n);
  for (const Variant& v : variants(count)) {
    for (int mode = 0; mode < 3; ++mode) {
      const std::size_t bytes = count * kernels::element_size(v.dt);
      std::vector<Bytes> in(n), work(n), out(n, Bytes(bytes, 0xcd));
      for (int r = 0; r < n; ++r) work[r] = in[r] = make_input(v.dt, v.op, r, count * n);
      auto st = run_ranks(n, [&](transport::Transport& t, int r) {
        CollArgs a = base_args(v.dt, v.op, count, chunk_for(count));
        a.send = mode ? work[r].data() : in[r].data();
        a.recv = mode == 0 ? out[r].data() : mode == 1 ? work[r].data() + r * bytes : work[r].data();
        return fn(t, a);
      });
      expect_all_ok(st);
      const Bytes full = reference(in, v.dt, v.op, count * n);
      for (int r = 0; r < n; ++r) {
        const unsigned char* got =
            mode == 0 ? out[r].data() : mode == 1 ? work[r].data() + r * bytes : work[r].data();
        Bytes want(full.begin() + r * bytes, full.begin() + (r + 1) * bytes);
        ASSERT_TRUE(same(Bytes(got, got + bytes), want)) << where(v.dt, v.op, mode, r);
      }
    }
  }
}
class ReduceScatter : public ::testing::TestWithParam<Param> {};
TEST_P(ReduceScatter, Ring) { check_reduce_scatter(ring_reduce_scatter, std::get<0>(GetParam()), std::get<1>(GetParam())); }
TEST_P(ReduceScatter, Rh) { check_reduce_scatter(rh_reduce_scatter, std::get<0>(GetParam()), std::get<1>(GetParam())); }
INSTANTIATE_TEST_SUITE_P(Algo, ReduceScatter,
                         ::testing::Combine(::testing::ValuesIn(kRanks), ::testing::ValuesIn(kCounts)),
                         param_name);

// reduce: every root choice class; non-root recv is null; mode 1 = in place on root.
class Reduce : public ::testing::TestWithParam<Param> {};
TEST_P(Reduce, Tree) {
  const auto [n, count] = GetParam();
  for (int root : {0, n - 1, n / 2}) {
    for (const Variant& v : variants(count)) {
      for (int mode = 0; mode < 2; ++mode) {
        const std::size_t bytes = count * kernels::element_size(v.dt);
        std::vector<Bytes> in(n);
        for (int r = 0; r < n; ++r) in[r] = make_input(v.dt, v.op, r, count);
        Bytes root_buf = mode ? in[root] : Bytes(bytes, 0xcd);
        auto st = run_ranks(n, [&](transport::Transport& t, int r) {
          CollArgs a = base_args(v.dt, v.op, count, chunk_for(count));
          a.root = root;
          a.send = (mode && r == root) ? root_buf.data() : in[r].data();
          a.recv = r == root ? root_buf.data() : nullptr;
          return tree_reduce(t, a);
        });
        expect_all_ok(st);
        ASSERT_TRUE(same(root_buf, reference(in, v.dt, v.op, count)))
            << where(v.dt, v.op, mode, root) << " (root)";
      }
    }
  }
}
INSTANTIATE_TEST_SUITE_P(Algo, Reduce,
                         ::testing::Combine(::testing::ValuesIn(kRanks), ::testing::ValuesIn(kCounts)),
                         param_name);

}  // namespace
}  // namespace chorus::algo::test
