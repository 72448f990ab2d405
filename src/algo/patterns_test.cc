// Exhaustive checks of the rank arithmetic in patterns.h for 1..64 ranks.
#include "algo/patterns.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace chorus::algo {
namespace {

TEST(Patterns, RingNeighboursAreInverse) {
  for (int n = 1; n <= 64; ++n) {
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(ring_prev(ring_next(r, n), n), r);
      if (n > 1) {
        EXPECT_NE(ring_next(r, n), r);
      }
    }
  }
}

TEST(Patterns, SplitCoversEveryElementOnce) {
  for (int n = 1; n <= 64; ++n) {
    for (std::size_t count : {0ul, 1ul, 7ul, std::size_t(n - 1), std::size_t(n), std::size_t(n + 1), 1031ul}) {
      std::size_t next = 0, lo = count, hi = 0;
      for (int i = 0; i < n; ++i) {
        const Block b = split_block(count, n, i);
        EXPECT_EQ(b.offset, next);
        next += b.count;
        lo = std::min(lo, b.count), hi = std::max(hi, b.count);
        EXPECT_EQ(split_range(count, n, i, i + 1).count, b.count);
      }
      EXPECT_EQ(next, count);
      EXPECT_LE(hi - lo, 1u);
      EXPECT_EQ(split_block(count, n, n).offset, count);
      EXPECT_EQ(split_range(count, n, 0, n).count, count);
    }
  }
}

TEST(Patterns, BinomialTreeSpansAllRanks) {
  for (int n = 1; n <= 64; ++n) {
    for (int root = 0; root < n; ++root) {
      std::vector<int> seen(n, 0);
      int depth_bound = 0;
      while ((1 << depth_bound) < n) ++depth_bound;
      for (int r = 0; r < n; ++r) {
        const int p = tree_parent(r, root, n);
        if (r == root) {
          EXPECT_EQ(p, -1);
        } else {
          ASSERT_GE(p, 0);
          const auto kids = tree_children(p, root, n);
          EXPECT_EQ(std::count(kids.begin(), kids.end(), r), 1) << n << " " << root << " " << r;
          int hops = 0, x = r;
          while (x != root && hops <= depth_bound) x = tree_parent(x, root, n), ++hops;
          EXPECT_EQ(x, root);
          EXPECT_LE(hops, depth_bound);
        }
        for (int k : tree_children(r, root, n)) {
          EXPECT_EQ(tree_parent(k, root, n), r);
          seen[k]++;
        }
        // Largest subtree first: virtual distances strictly decrease.
        const auto kids = tree_children(r, root, n);
        for (std::size_t i = 1; i < kids.size(); ++i) {
          EXPECT_GT(mod(kids[i - 1] - r, n), mod(kids[i] - r, n));
        }
      }
      for (int r = 0; r < n; ++r) EXPECT_EQ(seen[r], r == root ? 0 : 1);
    }
  }
}

TEST(Patterns, HalvingDoublingMapping) {
  for (int n = 1; n <= 64; ++n) {
    const int p = rhd_pow2(n);
    EXPECT_TRUE(p <= n && 2 * p > n && (p & (p - 1)) == 0);
    std::set<int> vranks;
    for (int r = 0; r < n; ++r) {
      const int v = rhd_vrank(r, n), f = rhd_fold_partner(r, n);
      if (f >= 0) {
        EXPECT_EQ(rhd_fold_partner(f, n), r);
      }
      if (v < 0) {
        ASSERT_GE(f, 0);
        EXPECT_GE(rhd_vrank(f, n), 0);
        continue;
      }
      EXPECT_LT(v, p);
      EXPECT_EQ(rhd_rank(v, n), r);
      vranks.insert(v);
    }
    EXPECT_EQ(static_cast<int>(vranks.size()), p);
    // Halving: partners share the range they split, and virtual rank v ends with block v.
    for (int v = 0; v < p; ++v) {
      int lo = 0;
      for (int d = p / 2; d >= 1; d /= 2) {
        const int w = v ^ d;
        EXPECT_EQ(lo, w & ~(2 * d - 1));  // partner's range starts where ours does
        lo = (v & d) ? lo + d : lo;
      }
      EXPECT_EQ(lo, v);
    }
  }
}

// rd's log2(p) whole-message copies must fit in small_bytes; p is the power of two <= n.
TEST(Patterns, RecursiveDoublingFits) {
  EXPECT_TRUE(rd_fits(32 << 10, 4, 64 << 10));
  EXPECT_FALSE(rd_fits((32 << 10) + 1, 4, 64 << 10));
  EXPECT_TRUE(rd_fits(32 << 10, 7, 64 << 10));  // p = 4
  EXPECT_FALSE(rd_fits(32 << 10, 8, 64 << 10));
  EXPECT_TRUE(rd_fits(64 << 10, 2, 64 << 10));
  EXPECT_TRUE(rd_fits(1 << 30, 1, 64 << 10));  // one rank: no exchange at all
}

TEST(Patterns, DisseminationReachesEveryone) {
  for (int n = 1; n <= 64; ++n) {
    const int rounds = dissemination_rounds(n);
    EXPECT_TRUE((1 << rounds) >= n && (rounds == 0 || (1 << (rounds - 1)) < n));
    std::vector<std::set<int>> know(n);
    for (int r = 0; r < n; ++r) know[r].insert(r);
    for (int k = 0; k < rounds; ++k) {
      auto next = know;
      for (int r = 0; r < n; ++r) {
        EXPECT_EQ(dissemination_from(dissemination_to(r, k, n), k, n), r);
        const int from = dissemination_from(r, k, n);
        next[r].insert(know[from].begin(), know[from].end());
      }
      know = next;
    }
    for (int r = 0; r < n; ++r) EXPECT_EQ(static_cast<int>(know[r].size()), n) << n;
  }
}

TEST(Patterns, PairwiseStepsArePermutations) {
  for (int n = 1; n <= 64; ++n) {
    for (int s = 1; s < n; ++s) {
      std::set<int> targets;
      for (int r = 0; r < n; ++r) {
        targets.insert(pairwise_to(r, s, n));
        EXPECT_EQ(pairwise_from(pairwise_to(r, s, n), s, n), r);
        EXPECT_NE(pairwise_to(r, s, n), r);
      }
      EXPECT_EQ(static_cast<int>(targets.size()), n);
    }
  }
}

}  // namespace
}  // namespace chorus::algo
