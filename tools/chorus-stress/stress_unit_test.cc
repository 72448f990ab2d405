// chorus-stress pieces that need no communicator: argument values, plans, and the
// exact-result check against results computed here from every rank's inputs.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "data.h"
#include "plan.h"
#include "stress_config.h"

namespace chorus_stress {
namespace {

TEST(StressConfig, ParsesInjections) {
  auto inj = parse_injection("kill@2:10");
  ASSERT_TRUE(inj);
  EXPECT_EQ(inj->what, Injection::What::kKill);
  EXPECT_EQ(inj->rank, 2);
  EXPECT_EQ(inj->step, 10);
  EXPECT_TRUE(parse_injection("desync@0:0"));
  for (const char* bad : {"", "kill", "kill@", "kill@1", "nap@1:2", "exit@-1:2", "exit@1:x",
                          "exit@1:2:3"})
    EXPECT_FALSE(parse_injection(bad)) << bad;
}

TEST(StressConfig, ParsesGroups) {
  auto g = parse_groups("tp=2,dp=rest");
  ASSERT_TRUE(g);
  ASSERT_EQ(g->size(), 2u);
  EXPECT_EQ((*g)[0].dim, dim_index("tp"));
  EXPECT_EQ((*g)[0].size, 2);
  EXPECT_EQ((*g)[1].size, 0);
  for (const char* bad : {"", "tp", "tp=0", "xx=2", "tp=2,tp=2", "tp=rest,dp=rest", "tp=2,"})
    EXPECT_FALSE(parse_groups(bad)) << bad;
}

TEST(StressConfig, RejectsBadCommandLines) {
  auto parse = [](std::vector<const char*> args) {
    args.insert(args.begin(), "chorus-stress");
    StressConfig cfg;
    return parse_args(static_cast<int>(args.size()), const_cast<char**>(args.data()), &cfg);
  };
  EXPECT_EQ(parse({"--pattern", "nope"}), 2);
  EXPECT_EQ(parse({"--size", "12Q"}), 2);
  EXPECT_EQ(parse({"--duration", "soon"}), 2);
  EXPECT_EQ(parse({"--unsafe-local-deadline"}), 2);
  EXPECT_EQ(parse({"--inject", "boom@1:1"}), 2);
  EXPECT_EQ(parse({"--steps", "5", "--pattern", "random"}), -1);
}

TEST(StressPlan, FiveDimensionsAndRandomIsDeterministic) {
  StressConfig cfg;
  cfg.size_bytes = 1 << 20;
  const std::array<int, kNumDims> sizes{2, 4, 4, 4, 4};
  auto ops = plan_step(cfg, 0, sizes);
  ASSERT_EQ(ops.size(), 5u);
  EXPECT_EQ(ops[0].kind, Kind::kAllReduce);
  EXPECT_EQ(ops[2].kind, Kind::kAllToAll);
  EXPECT_EQ(op_bytes(ops[0], 2), cfg.size_bytes);
  EXPECT_EQ(op_bytes(ops[3], 4), cfg.size_bytes);  // all_gather: the gathered buffer
  cfg.pattern = Pattern::kRandom;
  cfg.seed = 7;
  bool differs = false;
  for (int step = 0; step < 20; ++step) {
    auto a = plan_step(cfg, step, sizes), b = plan_step(cfg, step, sizes);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].kind, b[i].kind);
      EXPECT_EQ(a[i].count, b[i].count);
      EXPECT_EQ(a[i].dtype, b[i].dtype);
      EXPECT_LT(a[i].root, sizes[a[i].dim]);
      EXPECT_LE(op_bytes(a[i], sizes[a[i].dim]), cfg.size_bytes);
    }
    auto c = plan_step(cfg, step + 1, sizes);
    differs |= c.size() != a.size() || c[0].kind != a[0].kind || c[0].count != a[0].count;
  }
  EXPECT_TRUE(differs);
}

// Computes the result of `op` on rank `me` of `n` from every rank's inputs, like the
// collective would (float32 or bf16 element types), and checks it.
std::vector<unsigned char> simulate(const OpSpec& op, const DataKey& key, int me, int n) {
  const std::size_t es = chorus::dtype_size(op.dtype);
  const BufferCounts c = buffer_counts(op, n);
  std::vector<std::vector<unsigned char>> sends(n, std::vector<unsigned char>(c.send * es));
  for (int r = 0; r < n; ++r) fill_send(op, key, r, n, sends[r].data());
  auto get = [&](int r, std::size_t i) {
    if (op.dtype == chorus::DataType::kFloat32) {
      float f;
      std::memcpy(&f, sends[r].data() + i * 4, 4);
      return static_cast<double>(f);
    }
    std::uint16_t h;
    std::memcpy(&h, sends[r].data() + i * 2, 2);
    std::uint32_t bits = std::uint32_t{h} << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return static_cast<double>(f);
  };
  std::vector<double> out(c.recv);
  for (std::size_t i = 0; i < c.recv; ++i) {
    switch (op.kind) {
      case Kind::kAllReduce:
        for (int r = 0; r < n; ++r) out[i] += get(r, i);
        break;
      case Kind::kReduceScatter:
        for (int r = 0; r < n; ++r) out[i] += get(r, me * op.count + i);
        break;
      case Kind::kAllGather: out[i] = get(static_cast<int>(i / op.count), i % op.count); break;
      case Kind::kAllToAll:
        out[i] = get(static_cast<int>(i / op.count), me * op.count + i % op.count);
        break;
      case Kind::kBroadcast: out[i] = get(op.root, i); break;
    }
  }
  std::vector<unsigned char> recv(c.recv * es);
  for (std::size_t i = 0; i < c.recv; ++i) {
    float f = static_cast<float>(out[i]);
    if (op.dtype == chorus::DataType::kFloat32) {
      std::memcpy(recv.data() + i * 4, &f, 4);
    } else {
      std::uint32_t bits;
      std::memcpy(&bits, &f, 4);
      std::uint16_t h = static_cast<std::uint16_t>(bits >> 16);
      std::memcpy(recv.data() + i * 2, &h, 2);
    }
  }
  return recv;
}

TEST(StressData, ExactResultsPassAndAWrongElementIsNamed) {
  for (auto dtype : {chorus::DataType::kFloat32, chorus::DataType::kBfloat16}) {
    for (int k = 0; k < kNumKinds; ++k) {
      for (int n : {1, 3, 8}) {
        OpSpec op{static_cast<Kind>(k), 0, 37, dtype, n - 1};
        const DataKey key{5, 2};
        for (int me = 0; me < n; ++me) {
          auto recv = simulate(op, key, me, n);
          EXPECT_FALSE(check_recv(op, key, me, n, recv.data()))
              << kind_name(op.kind) << " n=" << n << " rank " << me;
          recv[recv.size() - 1] ^= 0x40;  // corrupt the last element
          auto bad = check_recv(op, key, me, n, recv.data());
          ASSERT_TRUE(bad) << kind_name(op.kind);
          EXPECT_EQ(bad->index, buffer_counts(op, n).recv - 1);
        }
      }
    }
  }
}

TEST(StressConfig, ParsesDelays) {
  auto d = parse_delay("2:5ms");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->rank, 2);
  EXPECT_EQ(d->delay, std::chrono::milliseconds(5));
  auto us = parse_delay("0:500us");
  ASSERT_TRUE(us);
  EXPECT_EQ(us->delay, std::chrono::microseconds(500));
  for (const char* bad : {"", "2", "x:5ms", "-1:5ms", "2:", "2:fast"})
    EXPECT_FALSE(parse_delay(bad)) << bad;
}

}  // namespace
}  // namespace chorus_stress
