// The owner's side of registered memory: memfd regions and the page that lists them.
#include "transport/shm/mem_registry.h"

#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <random>

#include "util/strings.h"

namespace chorus::shm {

struct MemRegistry::State {
  pid_t owner = 0;  // the process these belong to (a forked child makes its own)
  int page_fd = -1;
  RegistryPage* page = nullptr;
  std::uint64_t token = 0;
  std::uint64_t next_id = 1;
  struct Region {
    std::size_t bytes;
    int fd;
    std::uint64_t id;
  };
  std::map<std::uintptr_t, Region> regions;  // by base address

  void make_page();
  void publish();
};

namespace {

std::mutex& registry_mutex() {
  static std::mutex mu;
  return mu;
}

std::size_t round_to_pages(std::size_t bytes) {
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}

}  // namespace

std::string registry_page_name(std::uint64_t token) {
  return str_printf("chorus-registry-%016llx", static_cast<unsigned long long>(token));
}

std::string region_name(std::uint64_t token, std::uint64_t id) {
  return str_printf("chorus-mem-%016llx-%llu", static_cast<unsigned long long>(token),
                    static_cast<unsigned long long>(id));
}

// The page: a memfd of its own, so that a peer can map it from /proc/<pid>/fd.
void MemRegistry::State::make_page() {
  token = (std::uint64_t{std::random_device{}()} << 32) ^ std::random_device{}() ^
          static_cast<std::uint64_t>(::getpid());
  const int fd = ::memfd_create(registry_page_name(token).c_str(), MFD_CLOEXEC);
  if (fd < 0) return;
  void* p = ::ftruncate(fd, kRegistryPageBytes) == 0
                ? ::mmap(nullptr, kRegistryPageBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                : MAP_FAILED;
  if (p == MAP_FAILED) {
    ::close(fd);
    return;
  }
  page = new (p) RegistryPage();
  page->token = token;
  page_fd = fd;
}

// Rewrites the page's table from `regions` under the sequence lock.
void MemRegistry::State::publish() {
  RegistryPage& pg = *page;
  pg.version.fetch_add(1, std::memory_order_acq_rel);  // odd: changing
  std::atomic_thread_fence(std::memory_order_release);
  std::uint32_t n = 0;
  for (const auto& [base, r] : regions) {
    if (n == kMaxRegions) break;
    RegionEntry& e = pg.entries[n++];
    e.base.store(base, std::memory_order_relaxed);
    e.bytes.store(r.bytes, std::memory_order_relaxed);
    e.id.store(r.id, std::memory_order_relaxed);
    e.fd.store(r.fd, std::memory_order_relaxed);
  }
  pg.count.store(n, std::memory_order_relaxed);
  pg.version.fetch_add(1, std::memory_order_release);  // even: stable
}

MemRegistry& MemRegistry::instance() {
  static MemRegistry registry;
  return registry;
}

MemRegistry::State& MemRegistry::state() {
  const pid_t me = ::getpid();
  if (state_ == nullptr || state_->owner != me) {
    // A forked child inherits the parent's page mapped shared: it must not write there.
    // The parent's regions stay mapped in the child as plain memory, not listed.
    state_ = new State();  // never freed: peers may map the page until the process ends
    state_->owner = me;
    state_->make_page();
    page_.store(state_->page, std::memory_order_release);
  }
  return *state_;
}

int MemRegistry::page_fd() {
  std::lock_guard<std::mutex> lk(registry_mutex());
  return state().page_fd;
}

std::uint64_t MemRegistry::token() {
  std::lock_guard<std::mutex> lk(registry_mutex());
  return state().token;
}

Result<void*> MemRegistry::alloc(std::size_t bytes) {
  if (bytes == 0) return invalid_argument("mem_alloc: bytes must be > 0");
  const std::size_t size = round_to_pages(bytes);
  std::lock_guard<std::mutex> lk(registry_mutex());
  State& s = state();
  const std::uint64_t id = s.next_id++;
  const int fd = ::memfd_create(region_name(s.token, id).c_str(), MFD_CLOEXEC);
  if (fd < 0) return io_error("mem_alloc: memfd_create", errno);
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    const int err = errno;
    ::close(fd);
    return io_error(str_printf("mem_alloc: sizing %zu bytes", size), err);
  }
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    const int err = errno;
    ::close(fd);
    return io_error(str_printf("mem_alloc: mapping %zu bytes", size), err);
  }
  s.regions[reinterpret_cast<std::uintptr_t>(p)] = State::Region{size, fd, id};
  if (s.page != nullptr) s.publish();
  return p;
}

Status MemRegistry::free(void* ptr) {
  std::lock_guard<std::mutex> lk(registry_mutex());
  State& s = state();
  auto it = s.regions.find(reinterpret_cast<std::uintptr_t>(ptr));
  if (it == s.regions.end())
    return invalid_argument(str_printf("mem_free: ptr %p was not returned by mem_alloc (or was "
                                       "freed already)",
                                       ptr));
  const State::Region r = it->second;
  s.regions.erase(it);
  if (s.page != nullptr) s.publish();  // unlisted before the memory goes
  ::munmap(ptr, r.bytes);
  ::close(r.fd);
  return Status::ok();
}

std::size_t MemRegistry::listed() const {
  std::lock_guard<std::mutex> lk(registry_mutex());
  return state_ != nullptr && state_->owner == ::getpid() && state_->page != nullptr
             ? state_->page->count.load(std::memory_order_relaxed)
             : 0;
}

bool MemRegistry::holds(const void* p, std::size_t bytes) const {
  const RegistryPage* pg = page_.load(std::memory_order_acquire);
  if (pg == nullptr || pg->count.load(std::memory_order_relaxed) == 0) return false;
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  return scan_page(*pg, [&](const RegionEntry& e) {
    return region_holds(e.base.load(std::memory_order_relaxed),
                        e.bytes.load(std::memory_order_relaxed), addr, bytes);
  });
}

}  // namespace chorus::shm
