// Pure rank arithmetic shared by the algorithms: rings, block splits, binomial trees,
// recursive halving-doubling and dissemination. No I/O; tested exhaustively.
#pragma once
#include <cstddef>
#include <vector>

namespace chorus::algo {

// Ring neighbours of `rank` among `n` ranks.
inline int ring_next(int rank, int n) { return (rank + 1) % n; }
inline int ring_prev(int rank, int n) { return (rank + n - 1) % n; }
// (a mod n) in [0, n) for any int a.
inline int mod(int a, int n) { return ((a % n) + n) % n; }

// A contiguous range of elements.
struct Block {
  std::size_t offset = 0;
  std::size_t count = 0;
};
// Block i of `count` elements split into n nearly equal blocks: the first count % n
// blocks get one extra element; blocks are empty when count < n. REQUIRES: 0 <= i <= n
// (i == n gives the empty block at offset count).
Block split_block(std::size_t count, int n, int i);
// Elements of blocks [first, last) of the split above, as one range.
Block split_range(std::size_t count, int n, int first, int last);

// Binomial tree over n ranks rooted at `root`, built on virtual ranks
// v = (rank - root) mod n: the parent of v clears its lowest set bit; the children of v
// are v + 2^k for every 2^k below v's lowest set bit (all 2^k < n for the root).
int tree_parent(int rank, int root, int n);  // -1 for the root
// Children in decreasing subtree size (largest first: send order for broadcasts).
std::vector<int> tree_children(int rank, int root, int n);

// Recursive halving-doubling over the largest power of two p <= n. The first
// 2 * (n - p) ranks pair up (even r folds into r + 1); the odd one of each pair
// continues as virtual rank r / 2, every rank >= 2 * (n - p) as r - (n - p).
int rhd_pow2(int n);           // p: largest power of two <= n (n >= 1)
int rhd_vrank(int rank, int n);  // -1 for a rank that folds its data in and waits
int rhd_rank(int vrank, int n);  // real rank of a virtual rank
// Partner a folding rank pairs with (r + 1 for even r < 2(n-p), r - 1 for odd), or -1.
int rhd_fold_partner(int rank, int n);
// Below small_bytes an all_reduce is latency-bound. Recursive doubling of the whole
// message (rd) takes half of rhd's exchanges for log2(p) times the bytes (rhd sends
// 2(p-1)/p): it runs while those log2(p) copies stay within small_bytes.
bool rd_fits(std::size_t bytes, int n, std::size_t small_bytes);

// Dissemination (barrier): round k exchanges with distance 2^k, for 2^k < n.
int dissemination_rounds(int n);  // ceil(log2(n)); 0 for n == 1
inline int dissemination_to(int rank, int round, int n) { return (rank + (1 << round)) % n; }
inline int dissemination_from(int rank, int round, int n) { return mod(rank - (1 << round), n); }

// Pairwise exchange (all_to_all), step s in 1..n-1: send to rank + s, receive from rank - s.
inline int pairwise_to(int rank, int step, int n) { return (rank + step) % n; }
inline int pairwise_from(int rank, int step, int n) { return mod(rank - step, n); }

}  // namespace chorus::algo
