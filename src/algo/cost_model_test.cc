// The cost model: its text form, and the shape of its predictions (which algorithm wins
// where) for given parameters. No timing: the model is arithmetic.
#include "algo/cost_model.h"

#include <gtest/gtest.h>

#include "algo/selector.h"

namespace chorus::algo {
namespace {

CostParams params(int cpus) {
  CostParams p;
  p.cpus = cpus;
  return p;
}

const Capabilities kShm{true, true};
const Capabilities kTcp{};

TEST(CostModel, TextRoundTrip) {
  CostParams p = params(8);
  p.sync_us = 0.125;
  p.peer_read_bw = 7777;
  p.measured = true;
  CostParams q;
  ASSERT_TRUE(from_text(to_text(p), q)) << to_text(p);
  EXPECT_EQ(to_text(p), to_text(q));
  EXPECT_EQ(q.cpus, 8);
  EXPECT_TRUE(q.measured);
  EXPECT_DOUBLE_EQ(q.sync_us, 0.125);
}

TEST(CostModel, TextRejectsMalformed) {
  CostParams q;
  q.sync_us = 42;
  const std::string good = to_text(params(2));
  EXPECT_FALSE(from_text("", q));
  EXPECT_FALSE(from_text("garbage", q));
  EXPECT_FALSE(from_text(good + ";extra=1", q));
  EXPECT_FALSE(from_text(good.substr(0, good.size() / 2), q));
  std::string neg = good;
  neg.replace(neg.find("sync_us=") + 8, 0, "-");
  EXPECT_FALSE(from_text(neg, q));
  EXPECT_DOUBLE_EQ(q.sync_us, 42);  // untouched
}

TEST(CostModel, NoFormulaIsNegative) {
  const CostParams p = params(4);
  EXPECT_LT(predict_us(p, CollKind::kAllReduce, "hier", 1024, 4, kShm), 0);
  EXPECT_LT(predict_us(p, CollKind::kAllToAllV, "pairwise", 1024, 4, kShm), 0);
  EXPECT_LT(predict_us(p, CollKind::kAllReduce, "nonsense", 1024, 4, kShm), 0);
  EXPECT_GT(predict_us(p, CollKind::kAllReduce, "ring", 1024, 1, kShm), 0);
}

TEST(CostModel, GrowsWithSize) {
  const CostParams p = params(4);
  for (const char* a : {"shm", "shm_direct", "single_copy", "ring", "rhd", "tree"}) {
    double last = 0;
    for (std::size_t bytes = 8; bytes <= (64u << 20); bytes *= 8) {
      const double t = predict_us(p, CollKind::kAllReduce, a, bytes, 4, kShm);
      EXPECT_GE(t, last) << a << " at " << bytes;
      last = t;
    }
  }
}

// Small all_reduce: one barrier (shm) beats two (shm_direct) and three (single_copy);
// large: single copy moves the fewest bytes.
TEST(CostModel, AllReduceCrossovers) {
  const CostParams p = params(4);
  auto t = [&](const char* a, std::size_t b) {
    return predict_us(p, CollKind::kAllReduce, a, b, 4, kShm);
  };
  EXPECT_LT(t("shm", 64), t("shm_direct", 64));
  EXPECT_LT(t("shm", 64), t("single_copy", 64));
  EXPECT_LT(t("single_copy", 64 << 20), t("shm", 64 << 20));
  EXPECT_LT(t("shm_direct", 64 << 20), t("shm", 64 << 20));
}

// More ranks than processors: barriers need wake-ups, so the same work costs more.
TEST(CostModel, OversubscriptionCosts) {
  for (const char* a : {"shm", "shm_direct"}) {
    const double fits = predict_us(params(8), CollKind::kAllReduce, a, 4096, 8, kShm);
    const double over = predict_us(params(2), CollKind::kAllReduce, a, 4096, 8, kShm);
    EXPECT_GT(over, 2 * fits) << a;
  }
}

// The medium: a message step over TCP costs net_sync_us, over the shm rings far less.
TEST(CostModel, MediumLatency) {
  CostParams p = params(4);
  p.net_sync_us = 100;
  const double tcp = predict_us(p, CollKind::kAllReduce, "rhd", 8, 4, kTcp);
  const double shm = predict_us(p, CollKind::kAllReduce, "rhd", 8, 4, kShm);
  EXPECT_GT(tcp, 4 * 100);
  EXPECT_LT(shm, 100);
}

}  // namespace
}  // namespace chorus::algo
