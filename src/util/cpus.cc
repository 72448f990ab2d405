#include "util/cpus.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

namespace chorus {

bool move_to_cpu(int cpu) {
  cpu_set_t mask, one;
  if (cpu < 0 || cpu >= CPU_SETSIZE || ::sched_getaffinity(0, sizeof mask, &mask) != 0 ||
      !CPU_ISSET(cpu, &mask))
    return false;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  if (::sched_setaffinity(0, sizeof one, &one) != 0) return false;
  // The mask held the processor a moment ago; should restoring it fail (a cpuset changed
  // in between), the thread must not stay bound to one processor.
  for (int tries = 0; ::sched_setaffinity(0, sizeof mask, &mask) != 0; ++tries)
    if (tries == 3) return false;
  return true;
}

int runnable_tasks(const char* loadavg_text) {
  int running = 0;
  return std::sscanf(loadavg_text, "%*s %*s %*s %d/", &running) == 1 ? running : 0;
}

int runnable_tasks_now() {
  char buf[128] = {};
  const int fd = ::open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  const ssize_t n = ::read(fd, buf, sizeof(buf) - 1);
  ::close(fd);
  return n > 0 ? runnable_tasks(buf) : 0;
}

}  // namespace chorus
