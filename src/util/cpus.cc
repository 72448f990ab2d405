#include "util/cpus.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

namespace chorus {

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
