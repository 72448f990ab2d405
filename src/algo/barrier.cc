// Dissemination barrier: in round k every rank signals rank + 2^k and waits for rank - 2^k;
// after ceil(log2 n) rounds every rank has heard, transitively, from every other.
#include "algo/algorithm.h"
#include "algo/chunking.h"
#include "algo/patterns.h"

namespace chorus::algo {

Status dissemination_barrier(transport::Transport& t, const CollArgs& a) {
  const int r = t.rank(), n = t.size();
  const unsigned char token = 1;
  for (int k = 0; k < dissemination_rounds(n); ++k) {
    unsigned char got = 0;
    CHORUS_RETURN_IF_ERROR(exchange(t, a.tag(static_cast<std::uint32_t>(k)),
                                    dissemination_to(r, k, n), &token, 1,
                                    dissemination_from(r, k, n), &got, 1, a.deadline));
  }
  return Status();
}

}  // namespace chorus::algo
