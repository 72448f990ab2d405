// Where a rank crowded on one processor goes (spread.cc): the choice alone, apart from
// the system calls, so tests can give it any host.
#pragma once
#include <sched.h>

#include <cstdint>
#include <functional>

namespace chorus::shm {

// The processor of `mask` other than `mine` with the fewest ranks (`ranks[c]` on
// processor c, this rank counted on `mine`), provided it has at least two fewer than
// `mine`; among those with the fewest, the nearest to `mine` (`nearness(c)`: higher is
// nearer), then the lowest number. -1 when no processor qualifies.
int spread_target(const std::uint16_t* ranks, const cpu_set_t& mask, int mine,
                  const std::function<int(int)>& nearness);

// How near processor `c` is to `mine` on this host: 2 sharing its last-level cache, 1 in
// its package, 0 otherwise (sysfs topology; 0 where it cannot be read).
int host_nearness(int mine, int c);

}  // namespace chorus::shm
