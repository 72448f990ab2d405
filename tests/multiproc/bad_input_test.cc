// Bad arguments fail with exactly kInvalidArgument naming the argument, on every
// collective, and leave the communicator usable (a correct all_reduce follows).
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string_view>
#include <limits>
#include <string>
#include <vector>

#include "chorus/chorus.h"
#include "rank_runner.h"

namespace chorus {
namespace {

using chorus::testing::check;
using chorus::testing::RankRunner;
using chorus::testing::step;
using std::chrono::milliseconds;

constexpr auto kInvalid = ErrorCode::kInvalidArgument;
constexpr auto kF32 = DataType::kFloat32;
constexpr auto kSum = ReduceOp::kSum;
constexpr std::size_t kHuge = std::numeric_limits<std::size_t>::max();

// Expects kInvalidArgument naming `name`; a mismatch is recorded (gtest failure inside
// the rank) and the remaining checks still run.
void soft_expect_error(ErrorCode code, const std::function<void()>& fn, std::string_view name,
                       const char* call) {
  try {
    chorus::testing::expect_error(code, fn, name);
  } catch (const chorus::testing::CheckFailure& e) {
    ADD_FAILURE() << call << ": " << e.what();
  }
}
#define EXPECT_INVALID(call, name) soft_expect_error(kInvalid, [&] { call; }, name, #call)

// A correct all_reduce: the communicator still works after the errors.
void expect_usable(Communicator& comm, const std::string& after) {
  step("all_reduce after " + after);
  std::vector<std::int32_t> v(5, comm.rank() + 1), out(5);
  comm.all_reduce(v.data(), out.data(), v.size(), DataType::kInt32, kSum);
  const int n = comm.size();
  for (int x : out) check(x == n * (n + 1) / 2, "all_reduce after " + after + " gave a wrong sum");
}

void bad_buffers(Communicator& comm) {
  const int n = comm.size();
  std::vector<float> a(4 * n), b(4 * n);
  step("null buffers");
  EXPECT_INVALID(comm.all_reduce(nullptr, b.data(), 4, kF32, kSum), "send");
  EXPECT_INVALID(comm.all_reduce(a.data(), nullptr, 4, kF32, kSum), "recv");
  EXPECT_INVALID(comm.reduce(nullptr, b.data(), 4, kF32, kSum, 0), "send");
  EXPECT_INVALID(comm.all_gather(nullptr, b.data(), 4, kF32), "send");
  EXPECT_INVALID(comm.all_gather(a.data(), nullptr, 4, kF32), "recv");
  EXPECT_INVALID(comm.reduce_scatter(nullptr, b.data(), 4, kF32, kSum), "send");
  EXPECT_INVALID(comm.reduce_scatter(a.data(), nullptr, 4, kF32, kSum), "recv");
  EXPECT_INVALID(comm.all_to_all(nullptr, b.data(), 4, kF32), "send");
  EXPECT_INVALID(comm.all_to_all(a.data(), nullptr, 4, kF32), "recv");
  EXPECT_INVALID(comm.gather(nullptr, b.data(), 4, kF32, 0), "send");
  EXPECT_INVALID(comm.broadcast(a.data(), nullptr, 4, kF32, 0), "recv");
  EXPECT_INVALID(comm.scatter(a.data(), nullptr, 4, kF32, 0), "recv");
  if (n == 1) {  // only the root can see these; with one rank every rank is the root
    EXPECT_INVALID(comm.reduce(a.data(), nullptr, 4, kF32, kSum, 0), "recv");
    EXPECT_INVALID(comm.broadcast(nullptr, b.data(), 4, kF32, 0), "send");
    EXPECT_INVALID(comm.gather(a.data(), nullptr, 4, kF32, 0), "recv");
    EXPECT_INVALID(comm.scatter(nullptr, b.data(), 4, kF32, 0), "send");
  }
  expect_usable(comm, "null buffers");
  step("null buffers with count 0 are fine");
  comm.all_reduce(nullptr, nullptr, 0, kF32, kSum);
  comm.all_gather(nullptr, nullptr, 0, kF32);
  comm.broadcast(nullptr, nullptr, 0, kF32, 0);
  expect_usable(comm, "count 0 with null buffers");
}

void bad_counts(Communicator& comm) {
  const int n = comm.size();
  std::vector<float> a(8), b(8);
  step("counts too large");
  EXPECT_INVALID(comm.all_reduce(a.data(), b.data(), kHuge, kF32, kSum), "count");
  int negative = -1;
  const auto from_negative = static_cast<std::size_t>(negative);
  EXPECT_INVALID(comm.all_reduce(a.data(), b.data(), from_negative, DataType::kInt8, kSum), "count");
  // count * 4 bytes overflows size_t.
  EXPECT_INVALID(comm.broadcast(a.data(), b.data(), kHuge / 2 + 1, kF32, 0), "count");
  // No address space holds 2^62 bytes.
  EXPECT_INVALID(comm.all_reduce(a.data(), b.data(), std::size_t{1} << 62, DataType::kInt8, kSum), "count");
  // count * size overflows for the n-block collectives.
  if (n > 1) {
    EXPECT_INVALID(comm.all_gather(a.data(), b.data(), kHuge / 2 + 1, DataType::kInt8), "count");
    EXPECT_INVALID(comm.all_to_all(a.data(), b.data(), kHuge / 2 + 1, DataType::kInt8), "count");
  }
  expect_usable(comm, "too large counts");
}

void bad_enums_and_ranks(Communicator& comm) {
  const int n = comm.size(), r = comm.rank();
  std::vector<float> a(4 * n), b(4 * n);
  step("invalid dtype and op");
  const auto bad_type = static_cast<DataType>(99);
  const auto bad_op = static_cast<ReduceOp>(17);
  EXPECT_INVALID(comm.all_reduce(a.data(), b.data(), 4, bad_type, kSum), "dtype");
  EXPECT_INVALID(comm.broadcast(a.data(), b.data(), 4, bad_type, 0), "dtype");
  if (n > 1) {
    EXPECT_INVALID(comm.send(a.data(), 4, static_cast<DataType>(-1), (r + 1) % n), "dtype");
  }
  EXPECT_INVALID(comm.all_reduce(a.data(), b.data(), 4, kF32, bad_op), "op");
  EXPECT_INVALID(comm.reduce_scatter(a.data(), b.data(), 4, kF32, bad_op), "op");
  expect_usable(comm, "invalid dtype/op");
  step("root out of range");
  for (int root : {-1, n}) {
    EXPECT_INVALID(comm.reduce(a.data(), b.data(), 4, kF32, kSum, root), "root");
    EXPECT_INVALID(comm.broadcast(a.data(), b.data(), 4, kF32, root), "root");
    EXPECT_INVALID(comm.gather(a.data(), b.data(), 4, kF32, root), "root");
    EXPECT_INVALID(comm.scatter(a.data(), b.data(), 4, kF32, root), "root");
  }
  expect_usable(comm, "bad roots");
  step("peer out of range or self");
  for (int peer : {-1, n, r}) {
    EXPECT_INVALID(comm.send(a.data(), 4, kF32, peer), "peer");
    EXPECT_INVALID(comm.recv(b.data(), 4, kF32, peer), "peer");
  }
  expect_usable(comm, "bad peers");
}

void bad_spans(Communicator& comm) {
  const std::size_t n = static_cast<std::size_t>(comm.size());
  std::vector<float> a(4 * n), b(4 * n);
  std::vector<std::size_t> ok(n, 1), displs(n), shorter(n - 1, 1), longer(n + 1, 1);
  for (std::size_t i = 0; i < n; ++i) displs[i] = i;
  step("all_to_all_v spans of wrong length");
  EXPECT_INVALID(comm.all_to_all_v(a.data(), shorter, displs, b.data(), ok, displs, kF32), "send_counts");
  EXPECT_INVALID(comm.all_to_all_v(a.data(), ok, longer, b.data(), ok, displs, kF32), "send_displs");
  EXPECT_INVALID(comm.all_to_all_v(a.data(), ok, displs, b.data(), longer, displs, kF32), "recv_counts");
  EXPECT_INVALID(comm.all_to_all_v(a.data(), ok, displs, b.data(), ok, shorter, kF32), "recv_displs");
  step("typed overloads with mismatched spans");
  std::vector<float> three(3), two(2);
  EXPECT_INVALID(comm.all_reduce(std::span<const float>(three), std::span<float>(two), kSum), "recv");
  std::span<float> short_recv(three.data(), 3 * n - 1);
  EXPECT_INVALID(comm.all_gather(std::span<const float>(three), short_recv), "recv");
  expect_usable(comm, "bad spans");
}

class BadInput : public ::testing::TestWithParam<int> {};

TEST_P(BadInput, NullBuffers) {
  EXPECT_TRUE(chorus::testing::all_ok(RankRunner::run(GetParam(), bad_buffers, milliseconds(60000))));
}
TEST_P(BadInput, CountsTooLarge) {
  EXPECT_TRUE(chorus::testing::all_ok(RankRunner::run(GetParam(), bad_counts, milliseconds(60000))));
}
TEST_P(BadInput, InvalidDtypeOpRootPeer) {
  EXPECT_TRUE(
      chorus::testing::all_ok(RankRunner::run(GetParam(), bad_enums_and_ranks, milliseconds(60000))));
}
TEST_P(BadInput, SpansOfWrongLength) {
  EXPECT_TRUE(chorus::testing::all_ok(RankRunner::run(GetParam(), bad_spans, milliseconds(60000))));
}

INSTANTIATE_TEST_SUITE_P(Ranks, BadInput, ::testing::Values(1, 2, 3),
                         [](const auto& info) { return std::to_string(info.param) + "ranks"; });

TEST(BadInit, RankAndSizeOutOfRange) {
  using chorus::testing::expect_error;
  auto body = [] {
    auto store = open_file_store(chorus::testing::this_rank().store_dir);
    expect_error(kInvalid, [&] { Communicator::init(5, 2, store); }, "rank");
    expect_error(kInvalid, [&] { Communicator::init(-1, 2, store); }, "rank");
    expect_error(kInvalid, [&] { Communicator::init(2, 2, store); }, "rank");
    expect_error(kInvalid, [&] { Communicator::init(0, 0, store); }, "size");
    expect_error(kInvalid, [&] { Communicator::init(0, -3, store); }, "size");
  };
  EXPECT_TRUE(chorus::testing::all_ok(RankRunner::run_raw(1, body, milliseconds(30000))));
}

}  // namespace
}  // namespace chorus
