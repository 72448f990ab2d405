// The shm Transport: the engine's transport (engine::EngineTransport) with shared windows
// and progress words, and segment set-up (create, attach, unlink once everyone is attached).
#include "transport/shm/shm_transport.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "diag/log.h"
#include "transport/engine/engine_transport.h"
#include "transport/shm/bells.h"
#include "transport/shm/engine.h"
#include "transport/shm/mem_registry.h"
#include "transport/shm/peer_maps.h"
#include "transport/shm/single_copy.h"
#include "util/strings.h"

namespace chorus::shm {
namespace {

class ShmWindows final : public transport::SharedWindows {
 public:
  ShmWindows(Engine* engine, bool single_copy) : engine_(engine), single_copy_(single_copy) {}
  std::size_t window_bytes() const override { return engine_->segment().window_bytes(); }
  void* window(int rank) override { return engine_->segment().window(rank); }
  Status barrier(const transport::Tag& tag, Deadline deadline) override {
    return engine_->window_barrier(tag, deadline);
  }
  Status barrier_meanwhile(const transport::Tag& tag, Deadline deadline,
                           util::FunctionRef<void()> meanwhile) override {
    return engine_->window_barrier(tag, deadline, &meanwhile);
  }
  std::uint64_t barriers() const override { return engine_->window_barriers(); }
  std::size_t mailbox_bytes() const override { return sizeof(Mailbox::data); }
  Status exchange(const void* data, std::size_t bytes, const transport::Tag& tag,
                  Deadline deadline) override {
    if (bytes > mailbox_bytes())
      return Status(ErrorCode::kInternal,
                    str_printf("exchange of %zu bytes: a mailbox holds %zu", bytes,
                               mailbox_bytes()));
    return engine_->mailbox_exchange(data, bytes, tag, deadline);
  }
  const void* mailbox(int rank) const override { return engine_->mailbox(rank); }
  bool single_copy() const override { return single_copy_; }
  bool mappable(const void* p, std::size_t bytes) const override {
    return single_copy_ && MemRegistry::instance().holds(p, bytes);
  }
  // A range the peer registered (mem_registry.h) moves through this process's map of it.
  Status read_peer(int rank, const void* remote, void* local, std::size_t bytes) override {
    if (engine_->aborted()) return engine_->abort_status();
    if (void* mapped = PeerMaps::instance().find(registry_of(rank), remote, bytes)) {
      std::memcpy(local, mapped, bytes);
      PeerMaps::instance().count_transfer();
      return Status::ok();
    }
    return with_peer(rank, [&](pid_t pid, int name, const std::string& address) {
      return read_peer_memory(pid, name, address, remote, local, bytes);
    });
  }
  Status write_peer(int rank, const void* local, void* remote, std::size_t bytes) override {
    if (engine_->aborted()) return engine_->abort_status();
    if (void* mapped = PeerMaps::instance().find(registry_of(rank), remote, bytes)) {
      std::memcpy(mapped, local, bytes);
      PeerMaps::instance().count_transfer();
      return Status::ok();
    }
    return with_peer(rank, [&](pid_t pid, int name, const std::string& address) {
      return write_peer_memory(pid, name, address, local, remote, bytes);
    });
  }
  transport::HandOff hand_off() const override { return engine_->hand_off(); }
  std::atomic<std::uint64_t>* rank_word(int rank) override {
    return &engine_->segment().slot(rank).upper_word;
  }
  std::atomic<std::uint64_t>* common_word() override {
    return &engine_->segment().slot(0).common_word;
  }

 private:
  // Runs one single-copy transfer with peer `rank`; a failure while the peer is dying
  // becomes the loss of that peer (Engine::single_copy_failure).
  template <class Transfer>
  Status with_peer(int rank, Transfer transfer) {
    if (engine_->aborted()) return engine_->abort_status();
    const pid_t pid = engine_->segment().slot(rank).pid.load(std::memory_order_relaxed);
    Status st = transfer(pid, engine_->peer_name(rank), engine_->peer_address(rank));
    return st.is_ok() ? st : engine_->single_copy_failure(rank, std::move(st));
  }

  PeerRegistry registry_of(int rank) const {
    const RankSlot& s = engine_->segment().slot(rank);
    return PeerRegistry{s.pid.load(std::memory_order_relaxed),
                        s.registry_fd.load(std::memory_order_relaxed),
                        s.registry_token.load(std::memory_order_relaxed)};
  }

  Engine* engine_;
  bool single_copy_;
};

class ShmTransport final : public engine::EngineTransport {
 public:
  ShmTransport(std::shared_ptr<Engine> engine, bool single_copy)
      : EngineTransport(engine), engine_(std::move(engine)), windows_(engine_.get(), single_copy) {}
  std::string name() const override { return "shm"; }
  void set_progress(std::uint64_t last_done_seq) override {
    engine_->segment().slot(rank()).progress.store(last_done_seq + 1, std::memory_order_relaxed);
  }
  std::int64_t peer_progress(int peer) const override {
    if (peer < 0 || peer >= size() || peer == rank()) return -1;
    return static_cast<std::int64_t>(
               engine_->segment().slot(peer).progress.load(std::memory_order_relaxed)) - 1;
  }
  transport::SharedWindows* shared_windows() override {
    return windows_.window_bytes() > 0 ? &windows_ : nullptr;
  }

 private:
  std::shared_ptr<Engine> engine_;
  ShmWindows windows_;
};

// Everyone reports "ok" or its error; the first error (naming its rank) wins.
Status first_error(const ShmOptions& opts, const std::vector<std::string>& all,
                   const char* what) {
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (all[r] == "ok") continue;
    const int name = opts.rank_names.empty() ? static_cast<int>(r) : opts.rank_names[r];
    return Status(ErrorCode::kIo, str_printf("rank %d could not %s: %s", name, what, all[r].c_str()),
                  name);
  }
  return Status::ok();
}

// "1" when this rank can read the segment magic out of every peer's mapping with
// process_vm_readv, else "0".
std::string probe_peers(const Segment& seg, int rank) {
  for (int r = 0; r < seg.nranks(); ++r) {
    if (r == rank) continue;
    const RankSlot& s = seg.slot(r);
    if (!probe_peer_read(s.pid.load(std::memory_order_relaxed),
                         s.map_addr.load(std::memory_order_relaxed), kSegmentMagic))
      return "0";
  }
  return "1";
}

}  // namespace

namespace {

// Touches every page of the windows this rank will use before the first operation: its
// own (written: the pages are still zero, and no peer reads a window before set-up ends)
// and its peers' (read, one byte per page). The first access of a process to a page costs
// a page fault, and on virtual machines with shadow page tables a trap to the hypervisor
// that happens even when the kernel has populated the page (MADV_POPULATE_WRITE, tried
// and not enough): measured here,
// the first use of each window half after set-up took ~1 ms at 256 KiB against ~25 us
// later (docs/PERFORMANCE.md, "The first use of a window half"). The mailboxes likewise
// (the payload bytes of its own written, every page of the peers' read).
void touch_windows(const Segment& seg, int rank, int n) {
  const std::size_t bytes = seg.window_bytes();
  if (bytes == 0) return;
  std::memset(seg.window(rank), 0, bytes);
  for (Mailbox& m : seg.slot(rank).mailbox) std::memset(m.data, 0, sizeof(m.data));
  unsigned sum = 0;
  auto read_pages = [&](const void* at, std::size_t len) {
    auto* p = static_cast<char*>(const_cast<void*>(at));  // only read: the owner may be writing
    for (std::size_t off = 0; off < len; off += 4096)
      sum += static_cast<unsigned char>(std::atomic_ref<char>(p[off]).load(std::memory_order_relaxed));
    sum += static_cast<unsigned char>(std::atomic_ref<char>(p[len - 1]).load(std::memory_order_relaxed));
  };
  for (int r = 0; r < n; ++r) {
    if (r == rank) continue;
    read_pages(seg.window(r), bytes);
    read_pages(seg.slot(r).mailbox, sizeof(RankSlot::mailbox));
  }
  [[maybe_unused]] volatile unsigned sink = sum;
}

}  // namespace

std::size_t window_bytes_for_host() {
  constexpr std::size_t kMin = 256 << 10, kMax = 4 << 20;
  const long l2 = ::sysconf(_SC_LEVEL2_CACHE_SIZE);
  const std::size_t bytes = (l2 > 0 ? static_cast<std::size_t>(l2) : std::size_t(1) << 20) / 2;
  return std::clamp(bytes, kMin, kMax) & ~std::size_t{4095};
}

Result<std::unique_ptr<transport::Transport>> create_shm_transport(const ShmOptions& opts,
                                                                   const Exchange& exchange) {
  if (opts.ring_bytes < 4096)
    return invalid_argument(str_printf("shm ring size %zu is below 4096 bytes (CHORUS_BUFFSIZE)",
                                       opts.ring_bytes));
  if (!opts.rank_names.empty() && opts.rank_names.size() != static_cast<std::size_t>(opts.size))
    return invalid_argument(str_printf("shm rank_names has %zu entries for %d ranks",
                                       opts.rank_names.size(), opts.size));
  const std::string name = segment_name(opts.job_token);
  const int me = opts.rank_names.empty() ? opts.rank : opts.rank_names[opts.rank];
  Segment seg;
  std::string mine = "ok";
  if (opts.rank == 0) {
    auto s = Segment::create(name, opts.size, opts.ring_bytes, opts.job_token,
                             (opts.window_bytes + 4095) & ~std::size_t{4095});
    if (s.has_value()) seg = std::move(*s);
    else mine = s.status().message();
  }
  // Rank 0 removes the name on every path once the others had their chance to attach.
  struct Unlinker {
    const std::string& name;
    bool armed;
    ~Unlinker() {
      if (armed) (void)Segment::unlink(name);
    }
  } unlinker{name, opts.rank == 0 && mine == "ok"};
  CHORUS_ASSIGN_OR_RETURN(auto created, exchange("shm_created", mine));
  CHORUS_RETURN_IF_ERROR(first_error(opts, created, "create the shared-memory segment"));
  if (opts.rank != 0) {
    auto s = Segment::open(name, opts.size, opts.job_token);
    if (s.has_value()) seg = std::move(*s);
    else mine = s.status().message();
  }
  if (mine == "ok") {
    if (opts.single_copy) {
      allow_peer_reads();
      MemRegistry& reg = MemRegistry::instance();
      seg.slot(opts.rank).registry_fd.store(reg.page_fd(), std::memory_order_relaxed);
      seg.slot(opts.rank).registry_token.store(reg.token(), std::memory_order_relaxed);
    }
    touch_windows(seg, opts.rank, opts.size);
    seg.slot(opts.rank).map_addr.store(reinterpret_cast<std::uintptr_t>(seg.base()),
                                       std::memory_order_relaxed);
    seg.slot(opts.rank).pid.store(static_cast<std::int32_t>(::getpid()), std::memory_order_relaxed);
    seg.slot(opts.rank).state.store(kAlive, std::memory_order_release);
  }
  CHORUS_ASSIGN_OR_RETURN(auto attached, exchange("shm_attached", mine));
  CHORUS_RETURN_IF_ERROR(first_error(opts, attached, "attach the shared-memory segment"));
  CHORUS_LOG(INFO, Net, "rank %d: shm segment %s of %d ranks attached (%zu bytes per ring)",
             me, name.c_str(), opts.size, opts.ring_bytes);
  bool single_copy = false;
  if (opts.size > 1 && seg.window_bytes() > 0) {
    // Every rank takes part (a rank with single copy disabled says "0"), so all agree.
    CHORUS_ASSIGN_OR_RETURN(
        auto probes,
        exchange("shm_single_copy", opts.single_copy ? probe_peers(seg, opts.rank) : "0"));
    single_copy = std::all_of(probes.begin(), probes.end(),
                              [](const std::string& p) { return p == "1"; });
    CHORUS_LOG(INFO, Net, "rank %d: single-copy reads (process_vm_readv) %s", me,
               single_copy ? "work on every rank: used by large collectives"
                           : "do not work on every rank: staging through the windows");
  }
  Bells bells;
  if (opts.size > 1 && opts.bells) {
    CHORUS_ASSIGN_OR_RETURN(bells, ring_bells(opts, name, exchange));
    if (!bells.ready())
      CHORUS_LOG(INFO, Net, "rank %d: no doorbell FIFOs: combined waits take turns", me);
  }
  auto engine = std::make_shared<Engine>(opts, std::move(seg), std::move(bells));
  return std::unique_ptr<transport::Transport>(
      std::make_unique<ShmTransport>(std::move(engine), single_copy));
}

}  // namespace chorus::shm
