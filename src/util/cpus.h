// How many CPUs this process may run on (its affinity mask), at least 1.
#pragma once
#include <sched.h>

#include <algorithm>

namespace chorus {

inline int usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

}  // namespace chorus
