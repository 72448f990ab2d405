// Clock alignment through the store: every rank measures its steady clock against rank
// 0's with a few request/answer round trips (Cristian's method), keeping the tightest.
#pragma once
#include "bootstrap/store.h"
#include "diag/timeline.h"
#include "util/deadline.h"

namespace chorus::core {

// Collective over the ranks of `store` (a communicator's store). Rank 0 answers every
// other rank's `rounds` requests in rank order; rank r > 0 gets offset = rank 0's time
// at the answer minus the middle of its own round trip, error = half the round trip.
// On a store failure or past `deadline`, an alignment with method "none" (offset 0).
diag::ClockAlignment align_clock(bootstrap::Store& store, int rank, int size, int rounds,
                                 Deadline deadline);

}  // namespace chorus::core
