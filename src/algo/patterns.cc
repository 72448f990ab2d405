// Rank arithmetic for rings, splits, binomial trees, halving-doubling and dissemination.
#include "algo/patterns.h"

namespace chorus::algo {

Block split_block(std::size_t count, int n, int i) {
  const std::size_t un = static_cast<std::size_t>(n), ui = static_cast<std::size_t>(i);
  const std::size_t base = count / un, rem = count % un;
  if (ui >= un) return Block{count, 0};
  return Block{ui * base + (ui < rem ? ui : rem), base + (ui < rem ? 1 : 0)};
}

Block split_range(std::size_t count, int n, int first, int last) {
  const std::size_t begin = split_block(count, n, first).offset;
  const std::size_t end = split_block(count, n, last).offset;
  return Block{begin, end - begin};
}

int tree_parent(int rank, int root, int n) {
  const int v = mod(rank - root, n);
  if (v == 0) return -1;
  return mod((v & (v - 1)) + root, n);
}

std::vector<int> tree_children(int rank, int root, int n) {
  const int v = mod(rank - root, n);
  int limit = 1;  // children are v + m for m < lowest set bit of v (or < n for the root)
  if (v == 0) {
    while (limit < n) limit <<= 1;
  } else {
    limit = v & -v;
  }
  std::vector<int> kids;
  for (int m = limit >> 1; m >= 1; m >>= 1) {
    if (v + m < n) kids.push_back(mod(v + m + root, n));
  }
  return kids;
}

int rhd_pow2(int n) {
  int p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

int rhd_vrank(int rank, int n) {
  const int extra = n - rhd_pow2(n);
  if (rank < 2 * extra) return (rank % 2 == 1) ? rank / 2 : -1;
  return rank - extra;
}

int rhd_rank(int vrank, int n) {
  const int extra = n - rhd_pow2(n);
  return vrank < extra ? 2 * vrank + 1 : vrank + extra;
}

bool rd_fits(std::size_t bytes, int n, std::size_t small_bytes) {
  int log_p = 0;
  while ((2 << log_p) <= n) ++log_p;
  return bytes * static_cast<std::size_t>(log_p) <= small_bytes;
}

int rhd_fold_partner(int rank, int n) {
  const int extra = n - rhd_pow2(n);
  if (rank >= 2 * extra) return -1;
  return (rank % 2 == 0) ? rank + 1 : rank - 1;
}

int dissemination_rounds(int n) {
  int rounds = 0;
  while ((1 << rounds) < n) ++rounds;
  return rounds;
}

}  // namespace chorus::algo
