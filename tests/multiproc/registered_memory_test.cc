// chorus::mem_alloc / mem_free through the public API: buffers in registered memory give
// the same results as heap buffers in every single-copy collective (all ranks registered,
// or only some), and misuse is a clear error.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "chorus/chorus.h"
#include "rank_runner.h"

namespace chorus::mp {
namespace {

using chorus::testing::check;
using chorus::testing::RankRunner;
using chorus::testing::RunOptions;
using chorus::testing::step;

constexpr std::size_t kCount = 300001;  // floats per block: several pages and a tail

// A float buffer from mem_alloc (or from the heap when `registered` is false).
class Floats {
 public:
  Floats(std::size_t n, bool registered) : n_(n), registered_(registered) {
    p_ = static_cast<float*>(registered ? mem_alloc(n * sizeof(float)) : new float[n]);
  }
  ~Floats() {
    if (registered_) mem_free(p_);
    else delete[] p_;
  }
  Floats(const Floats&) = delete;
  Floats& operator=(const Floats&) = delete;
  float* data() { return p_; }
  float& operator[](std::size_t i) { return p_[i]; }

 private:
  std::size_t n_;
  bool registered_;
  float* p_;
};

float value(int rank, std::size_t i) { return float(rank * 1000 + static_cast<int>(i % 997)); }

void run_all(Communicator& comm, bool registered) {
  const int n = comm.size(), r = comm.rank();
  const std::size_t all = kCount * n;
  {
    step("all_gather");
    Floats send(kCount, registered), recv(all, registered);
    for (std::size_t i = 0; i < kCount; ++i) send[i] = value(r, i);
    comm.all_gather(send.data(), recv.data(), kCount, DataType::kFloat32);
    for (int q = 0; q < n; ++q)
      for (std::size_t i = 0; i < kCount; i += 101)
        check(recv[q * kCount + i] == value(q, i), "all_gather element");
  }
  {
    step("all_to_all");
    Floats send(all, registered), recv(all, registered);
    for (int q = 0; q < n; ++q)
      for (std::size_t i = 0; i < kCount; ++i) send[q * kCount + i] = value(r, i) + q;
    comm.all_to_all(send.data(), recv.data(), kCount, DataType::kFloat32);
    for (int q = 0; q < n; ++q)
      for (std::size_t i = 0; i < kCount; i += 101)
        check(recv[q * kCount + i] == value(q, i) + r, "all_to_all element");
  }
  {
    step("reduce_scatter and all_reduce");
    Floats send(all, registered), recv(all, registered);
    for (std::size_t i = 0; i < all; ++i) send[i] = value(r, i);
    comm.reduce_scatter(send.data(), recv.data(), kCount, DataType::kFloat32, ReduceOp::kSum);
    for (std::size_t i = 0; i < kCount; i += 101) {
      float want = 0;
      for (int q = 0; q < n; ++q) want += value(q, r * kCount + i);
      check(recv[i] == want, "reduce_scatter element");
    }
    comm.all_reduce(send.data(), recv.data(), all, DataType::kFloat32, ReduceOp::kSum);
    for (std::size_t i = 0; i < all; i += 101) {
      float want = 0;
      for (int q = 0; q < n; ++q) want += value(q, i);
      check(recv[i] == want, "all_reduce element");
    }
  }
  {
    step("broadcast");
    Floats buf(kCount, registered);
    for (std::size_t i = 0; i < kCount; ++i) buf[i] = r == 1 ? value(1, i) : -1.0f;
    comm.broadcast(buf.data(), buf.data(), kCount, DataType::kFloat32, 1);
    for (std::size_t i = 0; i < kCount; i += 101) check(buf[i] == value(1, i), "broadcast element");
  }
}

RunOptions single_copy_everywhere() {
  RunOptions o;
  o.options.algo = "all_gather:single_copy,all_to_all:single_copy,reduce_scatter:single_copy,"
                   "all_reduce:single_copy,broadcast:single_copy";
  return o;
}

class RegisteredMemory : public ::testing::TestWithParam<int> {};

TEST_P(RegisteredMemory, EveryRankRegistered) {
  auto body = [](Communicator& comm) { run_all(comm, true); };
  EXPECT_TRUE(chorus::testing::all_ok(RankRunner::run(
      GetParam(), body, std::chrono::seconds(60), single_copy_everywhere())));
}

TEST_P(RegisteredMemory, OnlyOddRanksRegistered) {
  auto body = [](Communicator& comm) { run_all(comm, comm.rank() % 2 == 1); };
  EXPECT_TRUE(chorus::testing::all_ok(RankRunner::run(
      GetParam(), body, std::chrono::seconds(60), single_copy_everywhere())));
}

TEST_P(RegisteredMemory, DefaultChoiceOnRegisteredBuffers) {
  auto body = [](Communicator& comm) { run_all(comm, true); };
  EXPECT_TRUE(chorus::testing::all_ok(RankRunner::run(GetParam(), body, std::chrono::seconds(60))));
}

// The selector prices single copy at memory speed once every rank's buffers were
// registered (the ranks agree on it per collective), and through system calls again once
// one rank's are not: the estimate of a single-copy all_gather follows. The placement
// scale is fixed so that only registration moves the figure.
double single_copy_estimate(Communicator& comm) {
  for (const auto& [algo, us] : comm.estimate("all_gather", kCount, DataType::kFloat32).candidates)
    if (algo == "single_copy") return us;
  return -1;
}

double after_all_gathers(Communicator& comm, bool registered) {
  Floats send(kCount, registered), recv(kCount * comm.size(), registered);
  for (std::size_t i = 0; i < kCount; ++i) send[i] = value(comm.rank(), i);
  for (int i = 0; i < 20; ++i)
    comm.all_gather(send.data(), recv.data(), kCount, DataType::kFloat32);
  return single_copy_estimate(comm);
}

TEST_P(RegisteredMemory, PricingFollowsEveryRanksRegistration) {
  auto body = [](Communicator& comm) {
    const bool odd = comm.rank() % 2 == 1;
    step("heap buffers");
    const double heap = after_all_gathers(comm, false);
    step("registered buffers");
    const double mapped = after_all_gathers(comm, true);
    step("only odd ranks registered");
    const double some = after_all_gathers(comm, odd);
    step("registered again");
    const double again = after_all_gathers(comm, true);
    check(heap > 0 && mapped > 0, "single copy has an estimate");
    check(mapped < heap, "registered buffers make single copy cheaper");
    check(some == heap, "one unregistered rank prices single copy as before");
    check(again == mapped, "registered again: priced at memory speed again");
  };
  RunOptions o;
  o.options.placement = "1";
  EXPECT_TRUE(chorus::testing::all_ok(RankRunner::run(GetParam(), body, std::chrono::seconds(60), o)));
}

INSTANTIATE_TEST_SUITE_P(Ranks, RegisteredMemory, ::testing::Values(2, 3));

TEST(RegisteredMemoryMisuse, ZeroBytesAndForeignPointersAreInvalidArguments) {
  try {
    (void)mem_alloc(0);
    ADD_FAILURE() << "mem_alloc(0) did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("bytes"), std::string::npos) << e.what();
  }
  std::vector<char> heap(64);
  try {
    mem_free(heap.data());
    ADD_FAILURE() << "mem_free of a heap pointer did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("ptr"), std::string::npos) << e.what();
  }
  void* p = mem_alloc(100);
  std::memset(p, 1, 100);
  mem_free(p);
  EXPECT_THROW(mem_free(p), Error);
}

}  // namespace
}  // namespace chorus::mp
