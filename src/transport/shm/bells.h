// Bells: one FIFO per rank next to its doorbell futex, so that a thread waiting on shared
// memory and sockets at once (a combined transport's wait, transport::RoutedTransport) can
// poll() for "a peer rang my doorbell" beside its sockets. A rank arms its bell by setting
// kBellSleeper in its slot; ringers then write a byte into its FIFO (doorbell.h).
#pragma once
#include <string>
#include <vector>

#include "transport/shm/shm_transport.h"
#include "util/unique_fd.h"

namespace chorus::shm {

struct Bells {
  UniqueFd in;                // this rank's FIFO, read end (non-blocking)
  UniqueFd keep;              // a write end of our own: the FIFO never reads as closed
  std::vector<UniqueFd> out;  // write end of every rank's FIFO (index = rank); empty = none
  bool ready() const { return in.valid() && !out.empty(); }
};

// Every rank of a segment creates its bell, opens every other's, and removes its name
// once all have; all ranks get bells or none (a rank that cannot make or open one, e.g.
// no FIFOs where segments live, leaves every rank without: waits then take turns in
// slices). Errors of `exchange` pass through.
Result<Bells> ring_bells(const ShmOptions& opts, const std::string& segment,
                         const Exchange& exchange);

}  // namespace chorus::shm
