// Test support for algorithm tests (header only, used by *_test.cc): runs one function
// per rank in threads over a fresh fake world, and builds typed test buffers.
#pragma once
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <tuple>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "algo/algorithm.h"
#include "kernels/half.h"
#include "kernels/reduce.h"
#include "transport/testing/fake_transport.h"

namespace chorus::algo::test {

using Bytes = std::vector<unsigned char>;
using RankFn = std::function<Status(transport::Transport&, int)>;

// Runs fn(transport, rank) for every rank on its own thread; returns each rank's Status.
inline std::vector<Status> run_ranks(int n, const RankFn& fn,
                                     std::vector<std::unique_ptr<transport::Transport>>* keep =
                                         nullptr) {
  auto world = transport::testing::make_fake_world(n);
  std::vector<Status> out(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] { out[r] = fn(*world[r], r); });
  }
  for (auto& th : threads) th.join();
  if (keep) *keep = std::move(world);
  return out;
}

// Stores the small integer v as element i of `buf` (dtype dt).
inline void put(Bytes& buf, DataType dt, std::size_t i, int v) {
  const std::size_t es = kernels::element_size(dt);
  unsigned char* p = buf.data() + i * es;
  switch (dt) {
    case DataType::kFloat16: { std::uint16_t h = kernels::float_to_half(float(v)); std::memcpy(p, &h, 2); return; }
    case DataType::kBfloat16: { std::uint16_t h = kernels::float_to_bf16(float(v)); std::memcpy(p, &h, 2); return; }
    case DataType::kFloat32: { float f = float(v); std::memcpy(p, &f, 4); return; }
    case DataType::kFloat64: { double f = v; std::memcpy(p, &f, 8); return; }
    default: { std::int64_t w = v; std::memcpy(p, &w, es); return; }  // little endian truncation
  }
}

inline bool is_unsigned(DataType dt) {
  return dt == DataType::kUint8 || dt == DataType::kUint32 || dt == DataType::kUint64;
}

// Rank r's input: `count` small integers chosen so that any combining order is exact
// (sums stay tiny; products are of 1, 2 and -1 only).
inline Bytes make_input(DataType dt, ReduceOp op, int rank, std::size_t count, int salt = 0) {
  Bytes b(count * kernels::element_size(dt));
  for (std::size_t i = 0; i < count; ++i) {
    const int h = static_cast<int>((rank * 5 + i * 3 + salt * 11 + 1) % 7);
    int v;
    if (op == ReduceOp::kProd) {
      v = h % 3 == 0 ? 2 : (h == 4 && !is_unsigned(dt) ? -1 : 1);
    } else {
      v = is_unsigned(dt) ? h : h - 3;
    }
    put(b, dt, i, v);
  }
  return b;
}

// Reference: op over inputs[0..n) in rank order, then finalize.
inline Bytes reference(const std::vector<Bytes>& inputs, DataType dt, ReduceOp op,
                       std::size_t count) {
  Bytes acc = inputs[0];
  for (std::size_t r = 1; r < inputs.size(); ++r) {
    kernels::reduce(acc.data(), acc.data(), inputs[r].data(), count, dt, op);
  }
  kernels::finalize(acc.data(), count, dt, op, static_cast<int>(inputs.size()));
  return acc;
}

inline CollArgs base_args(DataType dt, ReduceOp op, std::size_t count, std::size_t chunk_bytes) {
  CollArgs a;
  a.dtype = dt;
  a.op = op;
  a.count = count;
  a.comm = 7;
  a.seq = 42;
  a.chunk_bytes = chunk_bytes;
  a.deadline = Deadline::after(std::chrono::seconds(10));
  return a;
}

// Small chunks for mid-size counts so multi-chunk pipelining is exercised.
inline std::size_t chunk_for(std::size_t count) {
  if (count == 7) return 4;
  if (count == 1031) return 64;
  if (count >= 100000) return 32 << 10;
  return 1 << 20;
}

// Per-rank count for collectives whose buffers hold count * n: the largest case keeps the
// total near `total` elements (and not divisible by n).
inline std::size_t per_rank(std::size_t total, int n) { return total >= 100000 ? total / n + 1 : total; }

// Asserts equal bytes, reporting the first differing byte instead of both vectors.
inline ::testing::AssertionResult same(const Bytes& got, const Bytes& want) {
  if (got.size() != want.size()) {
    return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
  }
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (got[i] != want[i]) {
      return ::testing::AssertionFailure() << "first difference at byte " << i << ": "
                                           << int(got[i]) << " != " << int(want[i]);
    }
  }
  return ::testing::AssertionSuccess();
}

inline void expect_all_ok(const std::vector<Status>& st) {
  for (std::size_t r = 0; r < st.size(); ++r) ASSERT_TRUE(st[r].is_ok()) << r << ": " << st[r].to_string();
}

using Param = std::tuple<int, std::size_t>;  // ranks, count
inline const int kRanks[] = {1, 2, 3, 4, 5, 7, 8};
inline const std::size_t kCounts[] = {0, 1, 7, 1031, 300000};

inline std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  return "n" + std::to_string(std::get<0>(info.param)) + "_c" +
         std::to_string(std::get<1>(info.param));
}

}  // namespace chorus::algo::test
