// Runs every collective kind (and send/recv, barrier) on a communicator with exact
// verification against the reference data: used to show that a communicator built
// some other way (split, new_group) works like one from init().
#pragma once
#include <string>
#include <vector>

#include "chorus/communicator.h"

namespace chorus::mp {

// all_reduce, reduce, reduce_scatter, broadcast, all_gather, all_to_all, all_to_all_v,
// gather, scatter, send/recv around a ring (size > 1) and barrier, over a few
// (dtype, op, count) combinations; `salt` varies data and roots. Throws CheckFailure
// naming the first wrong result.
void exercise_every_kind(Communicator& comm, int salt);

// Checks comm.size() == old.size(), comm.rank() == position of my_old in `old`, and an
// all_gather of every member's old rank returns `old` (`what` names the communicator).
void expect_members(Communicator& comm, const std::vector<int>& old, int my_old,
                    const std::string& what);

}  // namespace chorus::mp
