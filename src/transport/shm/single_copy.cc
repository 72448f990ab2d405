// process_vm_readv wrappers: consent, the set-up probe and a read loop that finishes
// partial transfers.
#include "transport/shm/single_copy.h"

#include <errno.h>
#include <sys/prctl.h>
#include <sys/uio.h>

#include <cstring>

#include "util/strings.h"

namespace chorus::shm {

namespace {
// One call moves at most this much, so a huge message does not pin all its pages at once.
constexpr std::size_t kMaxPerCall = std::size_t{64} << 20;
}  // namespace

void allow_peer_reads() {
#ifdef PR_SET_PTRACER
  (void)::prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);  // EINVAL without Yama: fine
#endif
}

bool probe_peer_read(pid_t pid, std::uint64_t addr, std::uint64_t expect) {
  std::uint64_t got = 0;
  iovec local{&got, sizeof(got)};
  iovec remote{reinterpret_cast<void*>(addr), sizeof(got)};
  return addr != 0 && ::process_vm_readv(pid, &local, 1, &remote, 1, 0) ==
                          static_cast<ssize_t>(sizeof(got)) && got == expect;
}

Status read_peer_memory(pid_t pid, int rank, const std::string& address, const void* remote,
                        void* local, std::size_t bytes) {
  auto* dst = static_cast<char*>(local);
  auto* src = static_cast<const char*>(remote);
  while (bytes > 0) {
    const std::size_t want = bytes < kMaxPerCall ? bytes : kMaxPerCall;
    iovec l{dst, want};
    iovec r{const_cast<char*>(src), want};
    const ssize_t n = ::process_vm_readv(pid, &l, 1, &r, 1, 0);
    if (n <= 0) {
      const int err = n < 0 ? errno : EFAULT;
      if (err == EINTR) continue;
      const ErrorCode code = err == ESRCH ? ErrorCode::kPeerLost : ErrorCode::kIo;
      return Status(code,
                    str_printf("single-copy read of %zu bytes from peer rank %d (%s) failed: %s",
                               want, rank, address.c_str(),
                               err == ESRCH ? "the process is gone" : std::strerror(err)),
                    rank);
    }
    dst += n;
    src += n;
    bytes -= static_cast<std::size_t>(n);
  }
  return Status::ok();
}

}  // namespace chorus::shm
