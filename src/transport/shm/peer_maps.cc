// Maps of peers' registry pages and regions, opened through /proc/<pid>/fd/<n> (allowed to
// a process that may read the peer's memory at all; the link's name is checked, so a
// reused descriptor number is never mistaken for the region).
#include "transport/shm/peer_maps.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

#include "transport/shm/mem_registry.h"
#include "util/strings.h"

namespace chorus::shm {

namespace {

struct Mapping {
  char* base = nullptr;
  std::size_t bytes = 0;
};

struct Peer {
  std::uint64_t token = 0;
  const RegistryPage* page = nullptr;  // nullptr: the page could not be mapped
  std::map<std::uint64_t, Mapping> regions;  // by region id
};

// Opens the peer's descriptor `fd` if its link names `want` (a memfd's link reads
// "/memfd:<name> (deleted)"); -1 otherwise.
int open_peer_fd(pid_t pid, std::int64_t fd, const std::string& want, int flags) {
  const std::string path = str_printf("/proc/%d/fd/%lld", static_cast<int>(pid),
                                      static_cast<long long>(fd));
  char link[256];
  const ssize_t n = ::readlink(path.c_str(), link, sizeof(link) - 1);
  if (n <= 0) return -1;
  link[n] = '\0';
  const std::string text(link);
  if (text.rfind("/memfd:" + want, 0) != 0) return -1;
  const std::size_t after = 7 + want.size();  // the name must end there
  if (after < text.size() && text[after] != ' ') return -1;
  return ::open(path.c_str(), flags | O_CLOEXEC);
}

void* map_fd(int fd, std::size_t bytes, int prot) {
  if (fd < 0) return nullptr;
  void* p = ::mmap(nullptr, bytes, prot, MAP_SHARED, fd, 0);
  ::close(fd);
  return p == MAP_FAILED ? nullptr : p;
}

struct Listed {
  std::uint64_t base = 0, bytes = 0, id = 0;
  std::int64_t fd = -1;
};

// The entry of `page` that holds [addr, addr + n); false when none does.
bool lookup(const RegistryPage& page, std::uint64_t addr, std::size_t n, Listed& out) {
  return scan_page(page, [&](const RegionEntry& e) {
    out.base = e.base.load(std::memory_order_relaxed);
    out.bytes = e.bytes.load(std::memory_order_relaxed);
    out.id = e.id.load(std::memory_order_relaxed);
    out.fd = e.fd.load(std::memory_order_relaxed);
    return region_holds(out.base, out.bytes, addr, n);
  });
}

// Unmaps the peer's regions it no longer lists (it freed them).
void drop_unlisted(Peer& p) {
  for (auto it = p.regions.begin(); it != p.regions.end();) {
    const std::uint64_t id = it->first;
    if (scan_page(*p.page, [&](const RegionEntry& e) {
          return e.id.load(std::memory_order_relaxed) == id;
        })) {
      ++it;
      continue;
    }
    ::munmap(it->second.base, it->second.bytes);
    it = p.regions.erase(it);
  }
}

void forget(Peer& p) {
  for (auto& [id, m] : p.regions) ::munmap(m.base, m.bytes);
  p.regions.clear();
  if (p.page != nullptr)
    ::munmap(const_cast<RegistryPage*>(p.page), kRegistryPageBytes);
  p.page = nullptr;
}

}  // namespace

struct PeerMaps::State {
  std::mutex mu;
  std::unordered_map<pid_t, Peer> peers;
  std::atomic<std::uint64_t> mapped{0};
};

PeerMaps::PeerMaps() : state_(new State()) {}  // never freed: the maps live on to the end

PeerMaps& PeerMaps::instance() {
  static PeerMaps maps;
  return maps;
}

void* PeerMaps::find(const PeerRegistry& peer, const void* remote, std::size_t bytes) {
  if (peer.page_fd < 0 || peer.pid <= 0 || peer.token == 0 || bytes == 0) return nullptr;
  std::lock_guard<std::mutex> lk(state_->mu);
  Peer& p = state_->peers[peer.pid];
  if (p.token != peer.token) {  // first use, or another process with that pid since
    forget(p);
    p.token = peer.token;
    void* page = map_fd(
        open_peer_fd(peer.pid, peer.page_fd, registry_page_name(peer.token), O_RDONLY),
        kRegistryPageBytes, PROT_READ);
    p.page = static_cast<const RegistryPage*>(page);
    if (p.page != nullptr && p.page->token != peer.token) forget(p);
  }
  if (p.page == nullptr) return nullptr;
  Listed e;
  const auto addr = reinterpret_cast<std::uint64_t>(remote);
  if (!lookup(*p.page, addr, bytes, e)) return nullptr;
  auto it = p.regions.find(e.id);
  if (it == p.regions.end() || it->second.bytes != e.bytes) {
    if (it != p.regions.end()) {
      ::munmap(it->second.base, it->second.bytes);
      p.regions.erase(it);
    }
    drop_unlisted(p);
    void* m = map_fd(open_peer_fd(peer.pid, e.fd, region_name(peer.token, e.id), O_RDWR), e.bytes,
                     PROT_READ | PROT_WRITE);
    if (m == nullptr) return nullptr;
    it = p.regions.emplace(e.id, Mapping{static_cast<char*>(m), e.bytes}).first;
  }
  return it->second.base + (addr - e.base);
}

std::uint64_t PeerMaps::mapped_transfers() const {
  return state_->mapped.load(std::memory_order_relaxed);
}

void PeerMaps::count_transfer() { state_->mapped.fetch_add(1, std::memory_order_relaxed); }

}  // namespace chorus::shm
