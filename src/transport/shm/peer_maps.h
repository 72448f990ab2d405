// The reader's side of registered memory (mem_registry.h): this process's maps of the
// regions peers registered. A single-copy read or write of a peer's memory asks first
// whether the peer registered the range; if so it is one memcpy through a shared mapping
// (made at the first use of each region, kept while the peer lists it), otherwise the
// transport's process_vm_readv / process_vm_writev.
#pragma once
#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace chorus::shm {

// What a peer published in its segment slot about its registry page.
struct PeerRegistry {
  pid_t pid = 0;
  int page_fd = -1;  // the peer's descriptor of the page; -1: none
  std::uint64_t token = 0;
};

class PeerMaps {
 public:
  static PeerMaps& instance();

  // Where [remote, remote + bytes) of the peer is mapped in this process, when the peer
  // lists a region that holds the whole range and the region can be mapped here;
  // nullptr otherwise (the caller moves the bytes another way). Thread-safe.
  void* find(const PeerRegistry& peer, const void* remote, std::size_t bytes);

  // Transfers that went through a mapping (for tests and stats).
  std::uint64_t mapped_transfers() const;
  void count_transfer();

  PeerMaps(const PeerMaps&) = delete;
  PeerMaps& operator=(const PeerMaps&) = delete;

 private:
  PeerMaps();
  struct State;
  State* state_ = nullptr;
};

}  // namespace chorus::shm
