// Single-copy reads of a peer process's memory (Linux cross-memory attach,
// process_vm_readv): the bytes move once, from the peer's buffer into ours, instead of
// twice through a shared staging window. The kernel allows it between processes of one
// user unless a security module forbids it (Yama ptrace_scope >= 1 needs the target's
// consent, given by allow_peer_reads; containers may filter the call), so the transport
// probes it once at set-up and uses it only when it works for every rank.
#pragma once
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "util/status.h"

namespace chorus::shm {

// Lets processes of this user read this process's memory where Yama asks for consent
// (prctl PR_SET_PTRACER_ANY); a no-op elsewhere. Called only when single copy is enabled.
void allow_peer_reads();

// True when 8 bytes at `addr` in process `pid` can be read and equal `expect`.
bool probe_peer_read(pid_t pid, std::uint64_t addr, std::uint64_t expect);

// Copies `bytes` from `remote` in process `pid` to `local`; `rank` and `address` name
// the peer in errors. kPeerLost when the process is gone, kIo on any other failure.
Status read_peer_memory(pid_t pid, int rank, const std::string& address, const void* remote,
                        void* local, std::size_t bytes);
// The same from `local` into `remote` in process `pid` (process_vm_writev).
Status write_peer_memory(pid_t pid, int rank, const std::string& address, const void* local,
                         void* remote, std::size_t bytes);

}  // namespace chorus::shm
