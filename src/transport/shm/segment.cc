// Segment mapping (shm_open, ftruncate, mmap), validation, and the byte ring's copies.
#include "transport/shm/segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <utility>

#include "util/strings.h"
#include "util/unique_fd.h"

namespace chorus::shm {

namespace {
constexpr std::uint64_t kRingStride = sizeof(RingCtl);  // control block before each ring's data

std::uint64_t slots_offset() { return sizeof(SegmentHeader); }
std::uint64_t rings_offset(int n) {
  std::uint64_t off = slots_offset() + sizeof(RankSlot) * static_cast<std::uint64_t>(n);
  return (off + 4095) & ~std::uint64_t{4095};
}
std::uint64_t ring_span(std::uint64_t ring_bytes) { return kRingStride + ((ring_bytes + 63) & ~63ull); }
std::uint64_t page_up(std::uint64_t v) { return (v + 4095) & ~std::uint64_t{4095}; }
// The windows follow the rings, each starting on a page.
std::uint64_t windows_offset(int n, std::uint64_t ring_bytes) {
  const auto u = static_cast<std::uint64_t>(n);
  return page_up(rings_offset(n) + u * (u > 0 ? u - 1 : 0) * ring_span(ring_bytes));
}

Result<void*> map_fd(int fd, std::size_t bytes, const std::string& name) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return io_error("mmap of shared-memory segment " + name, errno);
  return p;
}
}  // namespace

std::string segment_name(std::uint64_t token) {
  return str_printf("/chorus-%016llx", static_cast<unsigned long long>(token));
}

std::uint64_t Segment::size_for(int nranks, std::uint64_t ring_bytes, std::uint64_t window_bytes) {
  const auto n = static_cast<std::uint64_t>(nranks);
  if (window_bytes == 0)
    return rings_offset(nranks) + n * (n > 0 ? n - 1 : 0) * ring_span(ring_bytes);
  return windows_offset(nranks, ring_bytes) + n * page_up(window_bytes);
}

Segment::~Segment() {
  if (base_ != nullptr) ::munmap(base_, bytes_);
}
Segment::Segment(Segment&& o) noexcept
    : base_(std::exchange(o.base_, nullptr)), bytes_(o.bytes_), hdr_(std::exchange(o.hdr_, nullptr)) {}
Segment& Segment::operator=(Segment&& o) noexcept {
  if (this != &o) {
    if (base_ != nullptr) ::munmap(base_, bytes_);
    base_ = std::exchange(o.base_, nullptr);
    bytes_ = o.bytes_;
    hdr_ = std::exchange(o.hdr_, nullptr);
  }
  return *this;
}

Result<Segment> Segment::create(const std::string& name, int nranks, std::uint64_t ring_bytes,
                                std::uint64_t job_token, std::uint64_t window_bytes) {
  const std::uint64_t bytes = size_for(nranks, ring_bytes, window_bytes);
  UniqueFd fd(::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600));
  if (!fd.valid()) return io_error("shm_open(O_CREAT) of " + name, errno);
  if (::ftruncate(fd.get(), static_cast<off_t>(bytes)) != 0) {
    int err = errno;
    (void)unlink(name);
    return io_error(str_printf("sizing shared-memory segment %s to %llu bytes (see "
                               "CHORUS_BUFFSIZE)", name.c_str(),
                               static_cast<unsigned long long>(bytes)), err);
  }
  auto p = map_fd(fd.get(), bytes, name);
  if (!p.has_value()) {
    (void)unlink(name);
    return p.status();
  }
  Segment seg(*p, bytes);
  // The file is zero-filled; construct the atomics in place so their state is defined.
  for (int r = 0; r < nranks; ++r) new (&seg.slot(r)) RankSlot();
  for (int s = 0; s < nranks; ++s)
    for (int d = 0; d < nranks; ++d)
      if (s != d) new (seg.ring_base(s, d)) RingCtl();
  seg.hdr_->version = kSegmentVersion;
  seg.hdr_->nranks = static_cast<std::uint32_t>(nranks);
  seg.hdr_->ring_bytes = ring_bytes;
  seg.hdr_->total_bytes = bytes;
  seg.hdr_->job_token = job_token;
  seg.hdr_->window_bytes = window_bytes;
  std::atomic_thread_fence(std::memory_order_release);
  seg.hdr_->magic = kSegmentMagic;
  return seg;
}

Result<Segment> Segment::open(const std::string& name, int nranks, std::uint64_t job_token) {
  UniqueFd fd(::shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0600));
  if (!fd.valid()) return io_error("shm_open of " + name, errno);
  struct stat st{};
  if (::fstat(fd.get(), &st) != 0) return io_error("fstat of " + name, errno);
  const auto bytes = static_cast<std::uint64_t>(st.st_size);
  if (bytes < sizeof(SegmentHeader))
    return Status(ErrorCode::kIo, str_printf("shared-memory segment %s is too small", name.c_str()));
  CHORUS_ASSIGN_OR_RETURN(void* p, map_fd(fd.get(), bytes, name));
  Segment seg(p, bytes);
  const SegmentHeader& h = *seg.hdr_;
  std::atomic_thread_fence(std::memory_order_acquire);
  if (h.magic != kSegmentMagic || h.version != kSegmentVersion || h.job_token != job_token ||
      h.nranks != static_cast<std::uint32_t>(nranks) || h.total_bytes != bytes ||
      size_for(nranks, h.ring_bytes, h.window_bytes) != bytes)
    return Status(ErrorCode::kIo, str_printf("shared-memory segment %s is not this job's (magic, "
                                             "version, token, ranks or size differ)", name.c_str()));
  return seg;
}

Status Segment::unlink(const std::string& name) {
  if (::shm_unlink(name.c_str()) != 0) return io_error("shm_unlink of " + name, errno);
  return Status::ok();
}

void Segment::populate(int rank) const {
  const int n = nranks();
  const std::uint64_t span = ring_span(ring_bytes());
  if (2 * static_cast<std::uint64_t>(n > 0 ? n - 1 : 0) * span > kPopulateBytes) return;
  auto fault_in = [](void* from, std::uint64_t bytes, bool touch = false) {
    // The range rounded out to whole pages; an error (e.g. EINVAL from an older kernel)
    // leaves the pages to be faulted in on first use.
    const auto first = reinterpret_cast<std::uintptr_t>(from) & ~std::uintptr_t{4095};
    const auto end = reinterpret_cast<std::uintptr_t>(from) + bytes;
    (void)::madvise(reinterpret_cast<void*>(first), end - first, MADV_POPULATE_WRITE);
    // One read per page from this process as well: under a hypervisor that shadows the
    // guest's page tables, the first access of each page by each process still exits to
    // the hypervisor after the kernel has mapped it (see segment.h). A read changes no
    // byte a peer may be writing.
    if (touch)
      for (std::uintptr_t at = first; at < end; at += 4096)
        (void)*reinterpret_cast<const volatile std::uint8_t*>(at);
  };
  fault_in(base_, rings_offset(n));
  for (int peer = 0; peer < n; ++peer) {
    if (peer == rank) continue;
    fault_in(ring_base(rank, peer), span, /*touch=*/true);
    fault_in(ring_base(peer, rank), span, /*touch=*/true);
  }
  if (window_bytes() > 0)
    fault_in(window(0), static_cast<std::uint64_t>(n) * page_up(window_bytes()));
}

std::uint8_t* Segment::ring_base(int src, int dst) const {
  const int n = static_cast<int>(hdr_->nranks);
  const int idx = src * (n - 1) + (dst < src ? dst : dst - 1);
  return static_cast<std::uint8_t*>(base_) + rings_offset(n) +
         static_cast<std::uint64_t>(idx) * ring_span(hdr_->ring_bytes);
}

Ring Segment::ring(int src, int dst) const {
  std::uint8_t* b = ring_base(src, dst);
  return Ring(reinterpret_cast<RingCtl*>(b), b + kRingStride, hdr_->ring_bytes);
}

void* Segment::window(int rank) const {
  const int n = static_cast<int>(hdr_->nranks);
  return static_cast<std::uint8_t*>(base_) + windows_offset(n, hdr_->ring_bytes) +
         static_cast<std::uint64_t>(rank) * page_up(hdr_->window_bytes);
}

std::uint64_t Ring::free_bytes() const {
  return cap_ - (ctl_->head.load(std::memory_order_relaxed) -
                 ctl_->tail.load(std::memory_order_acquire));
}

std::uint64_t Ring::used_bytes() const {
  return ctl_->head.load(std::memory_order_acquire) - ctl_->tail.load(std::memory_order_relaxed);
}

void Ring::put(const void* src, std::size_t n) {
  const std::uint64_t pos = ctl_->head.load(std::memory_order_relaxed);
  const std::uint64_t at = pos % cap_;
  const std::size_t first = static_cast<std::size_t>(std::min<std::uint64_t>(n, cap_ - at));
  std::memcpy(data_ + at, src, first);
  if (n > first) std::memcpy(data_, static_cast<const std::uint8_t*>(src) + first, n - first);
  ctl_->head.store(pos + n, std::memory_order_release);
}

void Ring::copy_out(std::uint64_t pos, void* dst, std::size_t n) const {
  const std::uint64_t at = pos % cap_;
  const std::size_t first = static_cast<std::size_t>(std::min<std::uint64_t>(n, cap_ - at));
  std::memcpy(dst, data_ + at, first);
  if (n > first) std::memcpy(static_cast<std::uint8_t*>(dst) + first, data_, n - first);
}

void Ring::peek(void* dst, std::size_t n) const {
  copy_out(ctl_->tail.load(std::memory_order_relaxed), dst, n);
}

void Ring::get(void* dst, std::size_t n) {
  const std::uint64_t pos = ctl_->tail.load(std::memory_order_relaxed);
  if (dst != nullptr) copy_out(pos, dst, n);
  ctl_->tail.store(pos + n, std::memory_order_release);
}

}  // namespace chorus::shm
