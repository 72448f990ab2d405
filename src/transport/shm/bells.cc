#include "transport/shm/bells.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "util/strings.h"

namespace chorus::shm {

namespace {
// Next to the segment (shm_open names live in /dev/shm).
std::string bell_path(const std::string& segment, int rank) {
  return str_printf("/dev/shm%s.bell%d", segment.c_str(), rank);
}

bool all_ok(const std::vector<std::string>& answers) {
  return std::all_of(answers.begin(), answers.end(),
                     [](const std::string& a) { return a == "ok"; });
}
}  // namespace

Result<Bells> ring_bells(const ShmOptions& opts, const std::string& segment,
                         const Exchange& exchange) {
  Bells b;
  const std::string mine = bell_path(segment, opts.rank);
  std::string made = "ok";
  ::unlink(mine.c_str());  // a leftover of a crashed job with the same token
  // The name goes on every path, once every rank that will open it has (or gave up).
  struct Unlink {
    const std::string& path;
    ~Unlink() { ::unlink(path.c_str()); }
  } unlink_mine{mine};
  if (::mkfifo(mine.c_str(), 0600) != 0) {
    made = str_printf("mkfifo %s: %s", mine.c_str(), std::strerror(errno));
  } else {
    b.in.reset(::open(mine.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    b.keep.reset(::open(mine.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC));
    if (!b.in.valid() || !b.keep.valid())
      made = str_printf("open %s: %s", mine.c_str(), std::strerror(errno));
  }
  CHORUS_ASSIGN_OR_RETURN(auto created, exchange("shm_bells", made));
  std::string opened = all_ok(created) ? "ok" : "skipped";
  if (opened == "ok") {
    b.out.resize(static_cast<std::size_t>(opts.size));
    for (int r = 0; r < opts.size && opened == "ok"; ++r) {
      b.out[r].reset(::open(bell_path(segment, r).c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC));
      if (!b.out[r].valid()) opened = str_printf("open bell %d: %s", r, std::strerror(errno));
    }
  }
  CHORUS_ASSIGN_OR_RETURN(auto all_opened, exchange("shm_bells_open", opened));
  if (!all_ok(all_opened)) return Bells{};
  return b;
}

}  // namespace chorus::shm
