// Placement: the policy's syntax, when rank 0 asks for a new scale, and the agreement:
// threads standing in for ranks choose seqs while rank 0 keeps proposing, and every seq
// gets the same scale on every rank.
#include "core/placement.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <random>
#include <thread>
#include <vector>

namespace chorus::core {
namespace {

using std::chrono::milliseconds;

TEST(PlacementTest, ParsesThePolicy) {
  PlacementPolicy p;
  ASSERT_TRUE(parse_placement("auto", p));
  EXPECT_EQ(p.mode, PlacementPolicy::Mode::kAuto);
  ASSERT_TRUE(parse_placement("off", p));
  EXPECT_EQ(p.mode, PlacementPolicy::Mode::kOff);
  ASSERT_TRUE(parse_placement("4", p));
  EXPECT_EQ(p.mode, PlacementPolicy::Mode::kFixed);
  EXPECT_EQ(p.fixed_scale, 4);
  for (const char* bad : {"0", "17", "-2", "far", "4x", " auto"})
    EXPECT_FALSE(parse_placement(bad, p)) << bad;
}

TEST(PlacementTest, WantsTheRatioWhenFarAndOneWhenBack) {
  EXPECT_EQ(wanted_scale({0, 0}, 1), 1);        // nothing measured
  EXPECT_EQ(wanted_scale({0, 0}, 3), 3);
  EXPECT_EQ(wanted_scale({150, 70}, 1), 1);     // 2.1x: noise, not a move
  EXPECT_EQ(wanted_scale({280, 70}, 1), 4);     // apart
  EXPECT_EQ(wanted_scale({7000, 70}, 1), kMaxPlacementScale);
  EXPECT_EQ(wanted_scale({150, 70}, 4), 4);     // between the thresholds: keep
  EXPECT_EQ(wanted_scale({100, 70}, 4), 1);     // back together
}

struct World {
  explicit World(int n) : words(n) {
    for (auto& w : words) ptrs.push_back(&w);
  }
  std::vector<std::atomic<std::uint64_t>> words;
  std::vector<std::atomic<std::uint64_t>*> ptrs;
  std::atomic<std::uint64_t> common{0};
};

// `n` ranks choose seqs 0..count-1; rank 0 wants wanted(seq). Returns scale[rank][seq].
// `slack`: as collectives would, a rank runs at most that many seqs ahead of the slowest.
template <class Wanted>
std::vector<std::vector<int>> run(World& w, int n, int count, int slack, Wanted wanted,
                                  std::vector<PlacementAgreement*>* out = nullptr) {
  std::vector<std::vector<int>> scales(n, std::vector<int>(count, 0));
  std::vector<std::unique_ptr<PlacementAgreement>> agreements;
  for (int r = 0; r < n; ++r)
    agreements.push_back(std::make_unique<PlacementAgreement>(r, w.ptrs, &w.common));
  std::vector<std::atomic<int>> done(n);
  auto slowest = [&] {
    int m = count;
    for (auto& d : done) m = std::min(m, d.load());
    return m;
  };
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      std::mt19937 rng(static_cast<unsigned>(r) * 7919u + 1u);
      for (int s = 0; s < count; ++s) {
        while (s - slowest() > slack) std::this_thread::yield();
        if (rng() % 16 == 0) std::this_thread::yield();  // ranks drift apart
        done[r].store(s);
        scales[r][s] = agreements[r]->value_for(static_cast<std::uint64_t>(s),
                                                r == 0 ? wanted(s) : 0,
                                                milliseconds(20000));
      }
    });
  }
  for (auto& t : threads) t.join();
  if (out != nullptr) out->push_back(agreements[0].release());
  return scales;
}

// Ranks that drift far apart: rank 0 proposes while others are anywhere in their choice.
TEST(PlacementTest, EverySeqGetsOneScaleOnEveryRankHoweverFarApart) {
  constexpr int kRanks = 4, kCount = 20000;
  for (int round = 0; round < 8; ++round) {
    World w(kRanks);
    const auto scales =
        run(w, kRanks, kCount, kCount, [](int s) { return (s / 100) % 2 == 0 ? 1 : 3; });
    for (int s = 0; s < kCount; ++s)
      for (int r = 1; r < kRanks; ++r)
        ASSERT_EQ(scales[r][s], scales[0][s]) << "round " << round << " seq " << s << " rank " << r;
  }
}

// Ranks kept close, as collectives keep them: the scale changes many times, at agreed seqs.
TEST(PlacementTest, EverySeqGetsOneScaleOnEveryRank) {
  constexpr int kRanks = 4, kCount = 20000;
  World w(kRanks);
  std::vector<PlacementAgreement*> zero;
  const auto scales =
      run(w, kRanks, kCount, 8, [](int s) { return (s / 200) % 2 == 0 ? 1 : 3; }, &zero);
  std::unique_ptr<PlacementAgreement> rank0(zero[0]);
  int switches = 0;
  for (int s = 0; s < kCount; ++s) {
    for (int r = 1; r < kRanks; ++r)
      ASSERT_EQ(scales[r][s], scales[0][s]) << "seq " << s << " rank " << r;
    if (s > 0 && scales[0][s] != scales[0][s - 1]) ++switches;
  }
  EXPECT_GE(switches, 10);
  EXPECT_GE(rank0->confirmed(), 10u);
}

TEST(PlacementTest, ASwitchLandsAheadOfEveryRankAndWaitsForTheLast) {
  World w(2);
  PlacementAgreement zero(0, w.ptrs, &w.common), one(1, w.ptrs, &w.common);
  const milliseconds d(1000);
  EXPECT_EQ(one.value_for(0, 0, d), 1);
  EXPECT_EQ(one.value_for(1, 0, d), 1);
  EXPECT_EQ(zero.value_for(0, 5, d), 1);  // proposes 5 from seq 2 + 4 on
  EXPECT_EQ(zero.confirmed(), 1u);
  for (std::uint64_t s = 1; s < 10; ++s) {
    const int want = s < 6 ? 1 : 5;
    EXPECT_EQ(zero.value_for(s, 5, d), want) << s;
    if (s >= 2) {
      EXPECT_EQ(one.value_for(s, 0, d), want) << s;
    }
  }
  // Rank 1 has chosen up to seq 9, rank 0 now 10: back to 1 from 10 + 1 + 4 on.
  EXPECT_EQ(zero.value_for(10, 1, d), 5);
  EXPECT_EQ(zero.confirmed(), 2u);
  for (std::uint64_t s = 11; s < 15; ++s) EXPECT_EQ(zero.value_for(s, 1, d), 5);
  // Rank 1 (at 9) has not passed 15, where the last switch landed: no proposal yet.
  EXPECT_EQ(zero.value_for(15, 7, d), 1);
  EXPECT_EQ(zero.confirmed(), 2u);
  for (std::uint64_t s = 10; s < 16; ++s) EXPECT_EQ(one.value_for(s, 0, d), s < 15 ? 5 : 1);
  EXPECT_EQ(zero.value_for(16, 7, d), 1);  // now it may (from 17 + 4 on)
  EXPECT_EQ(zero.confirmed(), 3u);
}

// Each rank's flag travels with its word: rank 0 sees whether every other rank flagged its
// latest choice, and the flag leaves the agreement on seqs untouched.
TEST(PlacementTest, FlagsTravelWithTheRanksWords) {
  World w(3);
  PlacementAgreement zero(0, w.ptrs, &w.common), one(1, w.ptrs, &w.common),
      two(2, w.ptrs, &w.common);
  const milliseconds d(1000);
  const int mapped = Pricing{1, true}.code();
  EXPECT_FALSE(zero.others_flagged());
  EXPECT_EQ(one.value_for(0, 0, d, true), 1);
  EXPECT_FALSE(zero.others_flagged());
  EXPECT_EQ(two.value_for(0, 0, d, true), 1);
  EXPECT_TRUE(zero.others_flagged());
  EXPECT_FALSE(one.others_flagged());  // rank 0 has not flagged
  // A proposal lands beyond every rank's seq, whatever their flags.
  EXPECT_EQ(zero.value_for(0, mapped, d, true), 1);
  EXPECT_EQ(zero.confirmed(), 1u);
  for (std::uint64_t s = 1; s < 8; ++s) {
    const int want = s < 5 ? 1 : mapped;
    EXPECT_EQ(zero.value_for(s, mapped, d, true), want) << s;
    EXPECT_EQ(one.value_for(s, 0, d, s != 6), want) << s;
    EXPECT_EQ(two.value_for(s, 0, d, true), want) << s;
  }
  EXPECT_TRUE(zero.others_flagged());
  EXPECT_EQ(one.value_for(8, 0, d, false), mapped);
  EXPECT_FALSE(zero.others_flagged());
}

TEST(PlacementTest, PricingCodesRoundTrip) {
  for (int scale = 1; scale <= kMaxPlacementScale; ++scale)
    for (bool mapped : {false, true}) {
      const Pricing p{scale, mapped};
      EXPECT_GE(p.code(), 1);
      EXPECT_LE(p.code(), 63);
      EXPECT_EQ(Pricing::of(p.code()), p);
    }
  EXPECT_EQ(Pricing::of(0), (Pricing{1, false}));  // the common word's zero: the default
}

}  // namespace
}  // namespace chorus::core
