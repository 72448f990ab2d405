// The shared-memory segment of one communicator: a header with per-rank liveness,
// doorbell and abort words, then one single-producer single-consumer byte ring per
// ordered pair of ranks (src -> dst), then one shared window per rank (read and written
// in place by intra-host algorithms). Layout is described in docs/WIRE.md.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "util/status.h"

namespace chorus::shm {

inline constexpr std::uint64_t kSegmentMagic = 0x43484f5255534d31ull;  // "CHORUSM1"
inline constexpr std::uint32_t kSegmentVersion = 10;
inline constexpr std::size_t kReasonBytes = 512;

// A rank's state word.
enum RankState : std::uint32_t { kUnattached = 0, kAlive = 1, kDeparted = 2, kAborted = 3 };

// One half of a rank's mailbox (RankSlot::mailbox, transport::SharedWindows::exchange):
// the exchange it holds (the word peers wait on, stored last), the operation it was
// published for (seq and signature, for desync checks), the time of a sampled arrival
// (hand_off.h), then the payload, so that a small payload, and the time a waiting peer
// measures the hand-off from, travel in the same cache line as the word that announces
// them.
inline constexpr std::size_t kMailboxLines = 64;
struct alignas(64) Mailbox {
  std::atomic<std::uint64_t> stamp{0};
  std::atomic<std::uint64_t> seq{0};
  std::atomic<std::uint64_t> sig{0};
  std::atomic<std::int64_t> arrive_ns{0};
  unsigned char data[kMailboxLines * 64 - 4 * sizeof(std::uint64_t)];
};
static_assert(sizeof(Mailbox) == kMailboxLines * 64);
static_assert(offsetof(Mailbox, data) < 64, "the payload starts on the stamp's line");

// Per-rank words, each on its own cache lines.
struct alignas(64) RankSlot {
  std::atomic<std::uint32_t> doorbell{0};  // futex word: bumped by whoever has news for this rank
  std::atomic<std::uint32_t> sleeping{0};  // who sleeps on it (doorbell.h: kFutexSleeper | kBellSleeper)
  std::atomic<std::int32_t> pid{0};
  std::atomic<std::uint32_t> state{kUnattached};
  // Written before state becomes kAborted: the failure's code, the rank that first
  // reported it (a forwarded abort keeps it), the culprit (-1: none) and the reason text.
  std::atomic<std::int32_t> abort_code{0};
  std::atomic<std::int32_t> abort_origin{-1};
  std::atomic<std::int32_t> abort_peer{-1};
  char abort_reason[kReasonBytes];
  // Shared-window barriers this rank has reached (see Engine::window_barrier), and the
  // operation (seq, signature) it arrived at barrier b for, in entry b % 2 (written
  // before win_arrived; a rank is never two barriers ahead of another).
  alignas(64) std::atomic<std::uint64_t> win_arrived{0};
  std::atomic<std::uint64_t> win_seq[2] = {0, 0};
  std::atomic<std::uint64_t> win_sig[2] = {0, 0};
  // The processor this rank last arrived from (at a barrier or an exchange; -1: none yet):
  // a waiter that finds the rank it waits for on its own processor moves (spread.cc).
  std::atomic<std::int32_t> cpu{-1};
  // This rank's last completed collective seq + 1 (0 = none); written (relaxed) by the
  // rank after each collective, read by peers only to word a kPeerLost message.
  std::atomic<std::uint64_t> progress{0};
  // Steady-clock time (ns) at which this rank arrived at its latest sampled window
  // barrier (every HandOffMeter::kEvery-th; written before win_arrived, on its line): a
  // peer that was already waiting measures how long the arrival took to reach it, from
  // the line it has just read. An exchange's time is in its mailbox.
  std::atomic<std::int64_t> win_arrive_ns{0};
  // Where this rank's process maps the segment (its own address space): a peer reading
  // the segment magic there with process_vm_readv proves single-copy reads work.
  alignas(64) std::atomic<std::uint64_t> map_addr{0};
  // This process's registry of memory peers can map (mem_registry.h): its descriptor of
  // the page (-1: none) and the page's token, written before the rank's state is alive.
  std::atomic<std::int32_t> registry_fd{-1};
  std::atomic<std::uint64_t> registry_token{0};
  // Words of the layer above (transport::SharedWindows::rank_word / common_word): written
  // only by this rank; the common word lives in rank 0's slot. Each on its own line.
  alignas(64) std::atomic<std::uint64_t> upper_word{0};
  alignas(64) std::atomic<std::uint64_t> common_word{0};
  // Small-message mailboxes: exchange e uses mailbox[e % 2].
  Mailbox mailbox[2];
};
static_assert(offsetof(RankSlot, win_arrive_ns) / 64 == offsetof(RankSlot, win_arrived) / 64,
              "a barrier's arrival time shares the line of its arrival word");

struct alignas(64) SegmentHeader {
  std::uint64_t magic;  // written last by the creator
  std::uint32_t version;
  std::uint32_t nranks;
  std::uint64_t ring_bytes;
  std::uint64_t total_bytes;
  std::uint64_t job_token;
  std::uint64_t window_bytes;  // per rank; 0 = no shared windows
};

// Control words of one ring; its data follows.
struct alignas(64) RingCtl {
  std::atomic<std::uint64_t> head{0};  // bytes ever written (producer)
  alignas(64) std::atomic<std::uint64_t> tail{0};  // bytes ever read (consumer)
};

// One byte ring seen from one side. Positions grow forever; index = pos % cap.
class Ring {
 public:
  Ring() = default;
  Ring(RingCtl* ctl, std::uint8_t* data, std::uint64_t cap) : ctl_(ctl), data_(data), cap_(cap) {}
  bool valid() const { return ctl_ != nullptr; }
  // Producer side.
  std::uint64_t free_bytes() const;
  void put(const void* src, std::size_t n);  // REQUIRES: n <= free_bytes()
  // Consumer side.
  std::uint64_t used_bytes() const;
  void peek(void* dst, std::size_t n) const;  // REQUIRES: n <= used_bytes(); does not consume
  void get(void* dst, std::size_t n);         // dst may be null: discard
 private:
  void copy_out(std::uint64_t pos, void* dst, std::size_t n) const;
  RingCtl* ctl_ = nullptr;
  std::uint8_t* data_ = nullptr;
  std::uint64_t cap_ = 0;
};

// A mapped segment. Move-only; unmaps on destruction (never unlinks).
class Segment {
 public:
  Segment() = default;
  ~Segment();
  Segment(Segment&& o) noexcept;
  Segment& operator=(Segment&& o) noexcept;
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;

  static std::uint64_t size_for(int nranks, std::uint64_t ring_bytes,
                                std::uint64_t window_bytes = 0);
  // Creates (O_EXCL) and initialises the segment `name`; kIo on failure.
  static Result<Segment> create(const std::string& name, int nranks, std::uint64_t ring_bytes,
                                std::uint64_t job_token, std::uint64_t window_bytes = 0);
  // Opens an existing segment and validates magic, version, size, rank count and token.
  static Result<Segment> open(const std::string& name, int nranks, std::uint64_t job_token);
  // Removes the name from /dev/shm (mappings stay valid). Returns errno-style status.
  static Status unlink(const std::string& name);

  int nranks() const { return static_cast<int>(hdr_->nranks); }
  std::uint64_t ring_bytes() const { return hdr_->ring_bytes; }
  RankSlot& slot(int rank) const {  // inline: several calls per synchronisation
    return reinterpret_cast<RankSlot*>(static_cast<std::uint8_t*>(base_) +
                                       sizeof(SegmentHeader))[rank];
  }
  Ring ring(int src, int dst) const;  // REQUIRES: src != dst
  std::uint64_t window_bytes() const { return hdr_->window_bytes; }
  void* window(int rank) const;  // REQUIRES: window_bytes() > 0
  const void* base() const { return base_; }
  // Faults in, writable, the pages rank `rank` will touch, without changing a byte: the
  // header and slots, its rings both ways and every window (it writes its own and reads
  // the others'); nothing when its rings alone exceed kPopulateBytes (they are then
  // faulted in as messages first pass through them, as before). Without it the first pass
  // of messages through a ring allocates and zeroes its pages one by one, 4 KiB at a time:
  // 2 ranks, pairwise all_to_all of 32 KiB blocks, 22 us a call for the first ~32 calls
  // against ~3 after. A kernel without MADV_POPULATE_WRITE (before 5.14): nothing.
  // The rings' pages are also read once each: on a guest whose hypervisor shadows its
  // page tables (the AMD EPYC family 26 VM of docs/PERFORMANCE.md, session 24) a mapped
  // page still costs 6-8 us at its first access by each process, and a 2-rank ring
  // all_gather of 16 KiB took 55-70 us a call for the first 64 calls (one pass through
  // a 1 MiB ring) against 2.5 after; with the read, 2.5 from the 20th call. The reads
  // move that cost to init: 2 ranks +3 ms, 4 ranks +18 ms, 8 ranks on 2 processors +80 ms
  // there; on hosts that map pages directly, a TLB miss per page. Windows are not read
  // (a call pays for the part of a window it uses, once).
  void populate(int rank) const;
  static constexpr std::uint64_t kPopulateBytes = 64ull << 20;

 private:
  Segment(void* base, std::size_t bytes) : base_(base), bytes_(bytes),
      hdr_(static_cast<SegmentHeader*>(base)) {}
  std::uint8_t* ring_base(int src, int dst) const;
  void* base_ = nullptr;
  std::size_t bytes_ = 0;
  SegmentHeader* hdr_ = nullptr;
};

// "/chorus-<token hex>": the segment name of a communicator with job token `token`.
std::string segment_name(std::uint64_t token);

}  // namespace chorus::shm
