// Shared-memory transport for ranks on one host: one segment per communicator holding a
// byte ring per ordered pair of ranks; see docs/WIRE.md ("Shared-memory segment").
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config/defaults.h"
#include "transport/transport.h"

namespace chorus::shm {

// The shared window per rank on this host: half the per-core L2 cache (sysconf), within
// [256 KiB, 4 MiB] and a multiple of 4096. A window algorithm stages a message through
// one half while its peers read the other; a half (L2/4) with the rank's input and output
// chunks of the same size stays in L2. On AMD EPYC (1 MiB L2), 2 ranks: all_reduce of
// 1-64 MiB ran 1.8-2.2x faster with 1 MiB windows than with 4 MiB ones, and 512 KiB
// windows were faster again out of place (256 KiB 1.6x, 1 MiB 1.3x); at 4 ranks they were
// within ~15% of 1 MiB ones (docs/PERFORMANCE.md, "Windows that fit the cache").
std::size_t window_bytes_for_host();

struct ShmOptions {
  int rank = 0;
  int size = 1;
  std::uint64_t job_token = 0;        // names the segment; openers check it
  std::size_t ring_bytes = config::defaults::buff_bytes;  // per (src, dst) ring (CHORUS_BUFFSIZE)
  std::size_t copy_out_bytes = 64 << 10;  // unexpected messages up to this size are copied out
  // Shared window per rank (transport::SharedWindows); 0 = none. A multiple of 4096.
  std::size_t window_bytes = window_bytes_for_host();
  // Offer single-copy reads of peers' memory (SharedWindows::read_peer) when every rank
  // can do them (CHORUS_SINGLE_COPY); agreed at set-up, so all ranks see the same answer.
  bool single_copy = config::defaults::single_copy;
  // The rank numbers messages and statuses use (rank_names[i] for member i; empty = i):
  // a transport among the ranks of one host inside a larger job speaks of job ranks.
  std::vector<int> rank_names;
  int job_size = 0;  // ranks of that job (0 = size): names are below it
  // Doorbell FIFOs (bells.h), for a combined transport that waits on these ranks and on
  // sockets at once (only such a transport needs them).
  bool bells = false;
  Deadline setup_deadline;
  transport::SignatureFormatter describe_sig = nullptr;  // for kDesync messages
};

// All-gathers one string per rank under `key` (index = rank); each key used once.
using Exchange = std::function<Result<std::vector<std::string>>(const std::string& key,
                                                                const std::string& mine)>;

// Rank 0 creates the segment, the others attach, and once every rank has attached rank 0
// removes its name (so nothing is left in /dev/shm whatever happens later).
// kIo when the segment cannot be created or opened; errors from `exchange` pass through.
Result<std::unique_ptr<transport::Transport>> create_shm_transport(const ShmOptions& opts,
                                                                   const Exchange& exchange);

}  // namespace chorus::shm
