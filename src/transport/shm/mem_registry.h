// Memory that peer processes on this host can map (what chorus::mem_alloc returns). Each
// allocation is its own memfd ("chorus-mem-<id>"), mapped shared and kept open; one page
// of this process, itself a memfd ("chorus-registry-<token>"), lists the live ones. A
// peer that reads or writes this process's memory for a single-copy algorithm looks the
// address up there and, when a region holds it, maps the region once and moves the bytes
// with plain loads and stores instead of one process_vm_readv call each time
// (peer_maps.h). Layout: docs/WIRE.md ("Registered memory").
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "util/status.h"

namespace chorus::shm {

// One live region, as peers read it: where it lies in the owner's address space, its
// size, its id (in its memfd's name) and the owner's descriptor of that memfd.
struct RegionEntry {
  std::atomic<std::uint64_t> base{0};
  std::atomic<std::uint64_t> bytes{0};
  std::atomic<std::uint64_t> id{0};
  std::atomic<std::int64_t> fd{-1};
};

inline constexpr std::size_t kRegistryPageBytes = 64 << 10;
inline constexpr std::size_t kMaxRegions = (kRegistryPageBytes - 64) / sizeof(RegionEntry);

// The page. `version` is a sequence lock: odd while the owner changes the table; a
// reader that saw it odd, or changed across its read, reads again.
struct alignas(64) RegistryPage {
  std::uint64_t token = 0;  // this process's random name for the page, set before any reader
  std::atomic<std::uint64_t> version{0};
  std::atomic<std::uint32_t> count{0};  // entries [0, count) are live
  RegionEntry entries[kMaxRegions];
};
static_assert(sizeof(RegistryPage) <= kRegistryPageBytes);

// Calls `visit` on the listed entries of `page` until it returns true, under the page's
// sequence lock: from the start again when the owner changed the table meanwhile (the
// visitor must only copy). Whether it returned true. Readers: peers (peer_maps.cc) and the
// owner's other threads (MemRegistry::holds).
template <class Visit>
bool scan_page(const RegistryPage& page, Visit visit) {
  for (;;) {
    const std::uint64_t v = page.version.load(std::memory_order_acquire);
    if (v % 2 != 0) continue;
    bool hit = false;
    std::uint32_t n = page.count.load(std::memory_order_relaxed);
    if (n > kMaxRegions) n = static_cast<std::uint32_t>(kMaxRegions);
    for (std::uint32_t i = 0; i < n && !hit; ++i) hit = visit(page.entries[i]);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (page.version.load(std::memory_order_relaxed) == v) return hit;
  }
}

// Whether a region of `size` bytes at `base` holds [addr, addr + n).
inline bool region_holds(std::uint64_t base, std::uint64_t size, std::uint64_t addr,
                         std::uint64_t n) {
  return addr >= base && addr - base <= size && n <= size - (addr - base);
}

// The memfd names peers check through /proc/<pid>/fd links: the page's, and region `id`'s.
std::string registry_page_name(std::uint64_t token);
std::string region_name(std::uint64_t token, std::uint64_t id);

// This process's registry. Thread-safe. A child process made by fork() starts a registry
// of its own (the parent's page and regions stay the parent's).
class MemRegistry {
 public:
  static MemRegistry& instance();

  // The page's descriptor and token, for peers (the page is made at the first call);
  // fd -1 when it could not be made (then no region is ever shared).
  int page_fd();
  std::uint64_t token();

  // `bytes` (> 0, rounded up to whole pages) of zeroed memory that peers can map; listed
  // while there is room in the page (kMaxRegions live regions), otherwise still usable,
  // only not mapped by peers. kInvalidArgument for 0 bytes; kIo when the memory cannot
  // be made.
  Result<void*> alloc(std::size_t bytes);
  // Frees what alloc returned; kInvalidArgument naming `ptr` for anything else.
  Status free(void* ptr);
  // Live regions listed in the page.
  std::size_t listed() const;
  // Whether [p, p + bytes) lies in one region listed in the page, so that peers map it.
  // Lock-free and without system calls (read on every collective's issue); a hint only:
  // a forked child sees its parent's list until it allocates or names its own page.
  bool holds(const void* p, std::size_t bytes) const;

  MemRegistry(const MemRegistry&) = delete;
  MemRegistry& operator=(const MemRegistry&) = delete;

 private:
  MemRegistry() = default;
  struct State;
  State& state();
  State* state_ = nullptr;
  std::atomic<const RegistryPage*> page_{nullptr};  // state_'s page, for holds()
};

}  // namespace chorus::shm
