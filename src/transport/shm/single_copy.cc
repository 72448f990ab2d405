// process_vm_readv / process_vm_writev wrappers: consent, the set-up probe, and transfer
// loops that finish partial transfers.
#include "transport/shm/single_copy.h"

#include <errno.h>
#include <sys/prctl.h>
#include <sys/uio.h>

#include <cstring>

#include "util/strings.h"

namespace chorus::shm {

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

namespace {

// One call moves at most this much, so a huge message does not pin all its pages at once.
constexpr std::size_t kMaxPerCall = std::size_t{64} << 20;

// Moves `bytes` between `local` and `remote` in process `pid` (writing when `write`),
// finishing partial transfers.
Status transfer(bool write, pid_t pid, int rank, const std::string& address, char* local,
                char* remote, std::size_t bytes) {
  while (bytes > 0) {
    const std::size_t want = bytes < kMaxPerCall ? bytes : kMaxPerCall;
    iovec l{local, want};
    iovec r{remote, want};
    const ssize_t n = write ? ::process_vm_writev(pid, &l, 1, &r, 1, 0)
                            : ::process_vm_readv(pid, &l, 1, &r, 1, 0);
    if (n <= 0) {
      const int err = n < 0 ? errno : EFAULT;
      if (err == EINTR) continue;
      const ErrorCode code = err == ESRCH ? ErrorCode::kPeerLost : ErrorCode::kIo;
      return Status(code,
                    str_printf("single-copy %s of %zu bytes %s peer rank %d (%s) failed: %s",
                               write ? "write" : "read", want, write ? "to" : "from", rank,
                               address.c_str(),
                               err == ESRCH ? "the process is gone" : std::strerror(err)),
                    rank);
    }
    local += n;
    remote += n;
    bytes -= static_cast<std::size_t>(n);
  }
  return Status::ok();
}

}  // namespace

Status read_peer_memory(pid_t pid, int rank, const std::string& address, const void* remote,
                        void* local, std::size_t bytes) {
  return transfer(false, pid, rank, address, static_cast<char*>(local),
                  const_cast<char*>(static_cast<const char*>(remote)), bytes);
}

Status write_peer_memory(pid_t pid, int rank, const std::string& address, const void* local,
                         void* remote, std::size_t bytes) {
  return transfer(true, pid, rank, address, const_cast<char*>(static_cast<const char*>(local)),
                  static_cast<char*>(remote), bytes);
}

}  // namespace chorus::shm
