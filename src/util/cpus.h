// The host's processors as this process sees them: how many it may run on (its affinity
// mask) and how many tasks are runnable on the host right now (/proc/loadavg).
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

// Moves the calling thread to processor `cpu` now and gives it back the affinity mask it
// had (the scheduler may move it again later). False when `cpu` is not in the mask or
// the kernel refused the move; the mask is unchanged then. Should giving the mask back
// fail (a cpuset changed in between), the thread stays bound to `cpu`, and false too.
bool move_to_cpu(int cpu);

// The runnable tasks in a /proc/loadavg text ("0.52 0.58 0.59 3/456 7890" -> 3); 0 when it
// does not parse.
int runnable_tasks(const char* loadavg_text);

// The runnable tasks on the host now, the calling thread included; 0 when unknown.
int runnable_tasks_now();

}  // namespace chorus
