// The cost model's formulas (docs/ALGORITHMS.md, "The cost model"): per algorithm, the
// synchronisations on its critical path and the bytes it copies, reduces or reads from
// peers, each at the bandwidth of the working set's level (in cache or out).
#include "algo/cost_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "algo/selector.h"

namespace chorus::algo {

namespace {

constexpr double kOpUs = 2.0;              // per-operation fixed cost (issue, record, finish)
constexpr double kScratch = 128 << 10;     // single-copy reduce_scatter's read unit
// A transfer through a map of a peer's registered memory: the look-up of its region in
// the peer's registry page (transport/shm/peer_maps.h) before the memcpy.
constexpr double kMappedCallUs = 0.1;

struct Ctx {
  const CostParams& p;
  int n;
  bool windows;
  // Ranks per processor when the ranks outnumber the processors (>= 1): every rank's
  // copying and reducing shares a core.
  double over() const { return p.cpus > 0 && n > p.cpus ? double(n) / p.cpus : 1.0; }
  // Every rank has a processor: ranks spin while they wait, and a one-way stream between
  // two of them (one copying chunks in while the other copies the previous one out) runs
  // at the staged rate the probe measured.
  bool running() const { return p.cpus <= 0 || n <= p.cpus; }
  // A working set of `ws` bytes per rank stays in cache: ranks that share a processor
  // share its cache too.
  bool fits(double ws) const { return ws * over() <= p.cache_bytes; }
  double copy_bw(double ws) const { return fits(ws) ? p.copy_bw_cache : p.copy_bw_mem; }
  double copy(double x, double ws) const { return over() * x / copy_bw(ws); }
  double reduce(double x, double ws) const {
    return over() * x / (fits(ws) ? p.reduce_bw_cache : p.reduce_bw_mem);
  }
  // `calls` process_vm_readv calls reading x bytes in all from peers' buffers of `ws`
  // bytes each (or, with the peers' buffers mapped, memcpy calls: at the copy rate).
  double peer_read(double x, double calls, double ws) const {
    return over() * read_once(x, calls, ws);
  }
  // The same for a rank with a processor to itself.
  double read_once(double x, double calls, double ws) const {
    if (p.mapped_peers) return calls * kMappedCallUs + x / copy_bw(ws);
    return calls * p.peer_read_us + x / (fits(ws) ? p.peer_read_bw_cache : p.peer_read_bw);
  }
  // A window barrier: every rank's arrival crosses a cache line; with more ranks than
  // processors, each processor must run each of its n/c ranks to arrive: waiters poll with
  // sched_yield() then (engine/wait_policy.h), so a switch to a polling rank, not a wake-up.
  double barrier() const {
    if (n <= 1) return 0;
    if (p.cpus > 0 && n > p.cpus) return p.switch_us * double(n) / p.cpus + p.sync_us * n;
    return p.sync_us * n;
  }
  double chunks(double staged) const {
    return std::max(1.0, std::ceil(staged / std::max(64.0, p.window_half)));
  }
};

double log2_up(int n) { return n <= 1 ? 0 : std::ceil(std::log2(double(n))); }
int pow2_floor(int n) {
  int p = 1;
  while (2 * p <= n) p *= 2;
  return p;
}

// One step of a message algorithm (ring, rd, rhd, rh, tree, pairwise): `active` ranks each
// move `bytes` (sent plus received: each end of a message copies it), `recvs` messages
// arrive, `reducers` ranks each reduce `reduce` bytes (working set `ws`). `msg` > 0: the
// algorithm is unchunked and sends messages of that size; 0: chunked (ring, tree), its
// messages `piece` bytes, cut into chunks.
struct Step {
  double active = 0, recvs = 0, bytes = 0, reducers = 0, reduce = 0, ws = 0, msg = 0,
         piece = 0;
};

// The time of message steps over TCP, or over the shm rings on one host (docs/ALGORITHMS.md,
// "Message algorithms"): the longer of two bounds.
// - The path: step after step, a hand-off (a TCP message, or a flag of the rings; plus a
//   wake-up when the host runs more ranks than processors, where a waiting rank sleeps)
//   and the busiest rank's copies and reduction; a chunked algorithm reduces one chunk
//   while the next arrives when every rank has a core (all but one chunk's share of the
//   shorter of the two is hidden), and keeps its chunks in cache; an
//   unchunked one copies through TCP at the out-of-cache rate once its messages outgrow
//   the cache.
// - The work (the contention term): every message's hand-off, every rank's copies and
//   reductions, shared by the processors; it exceeds the path only when the ranks
//   outnumber them, and there it ranks algorithms by messages and bytes in all.
class MsgTime {
 public:
  explicit MsgTime(const Ctx& c) : c_(c) {}
  MsgTime& add(const Step& s, double times = 1) {
    const CostParams& p = c_.p;
    const bool asleep = p.cpus > 0 && c_.n > p.cpus;
    // With more ranks than processors a waiter over the shm rings polls with sched_yield()
    // (a switch hands it the processor); over TCP it sleeps in poll() (a wake-up).
    const double hop = c_.windows ? 2 * p.sync_us + (asleep ? p.switch_us : 0)
                                  : p.net_sync_us + (asleep ? p.wake_us : 0);
    // Over the shm rings, between running ranks, a one-way step (each message's receiver
    // sends nothing back, as in the tree's levels: a sender copies in what its receiver
    // copies out) streams at the rings' rate, an exchange (every active rank sends and
    // receives: b counts both) at the staged exchange's.
    const bool one_way = 2 * s.recvs <= s.active;
    double bw = !c_.windows ? p.net_bw
                : asleep    ? p.copy_bw_mem
                : one_way   ? p.ring_bw
                            : 2 * p.exchange_bw;
    if (!c_.windows && s.msg > p.cache_bytes) bw *= p.copy_bw_mem / p.copy_bw_cache;
    const double rbw = s.ws <= p.cache_bytes ? p.reduce_bw_cache : p.reduce_bw_mem;
    const double m = s.bytes / bw, r = s.reducers > 0 ? s.reduce / rbw : 0;
    const double chunks = std::max(1.0, std::ceil(s.piece / std::max(1.0, p.chunk_bytes)));
    const double overlapped = std::max(m, r) + std::min(m, r) / chunks;
    // The shm engine hands a message over a ring quarter at a time (each a flag the
    // receiver waits for, as a window chunk is a barrier); TCP streams it.
    const double message = one_way ? s.bytes : s.bytes / 2;
    const double hops =
        c_.windows ? hop * std::max(1.0, std::ceil(message / std::max(4096.0, p.ring_quarter)))
                   : hop;
    path_ += times * (hops + (s.msg == 0 && !asleep ? overlapped : m + r));
    work_ += times * (s.recvs * hops + s.active * m + s.reducers * r);
    return *this;
  }
  double us() const {
    const double cores = c_.p.cpus > 0 ? std::min(c_.n, c_.p.cpus) : c_.n;
    return std::max(path_, work_ / cores);
  }

 private:
  const Ctx& c_;
  double path_ = 0, work_ = 0;
};

// A binomial tree over n ranks, chunked: the reduction's levels (leaves first: every rank
// takes part in the first, half of them in the next, ...) or the broadcast's (the reverse).
// Each active rank moves the whole message once per level; a receiver of the reduction
// reduces it.
void tree_levels(MsgTime& t, int n, double s, bool reduce) {
  const int levels = static_cast<int>(log2_up(n));
  for (int l = 0; l < levels; ++l) {
    const double active = std::min<double>(n, std::ldexp(1.0, reduce ? levels - l : l + 1));
    const double recvs = std::floor(active / 2);
    t.add(Step{active, recvs, s, reduce ? recvs : 0, s, s, 0, s});
  }
}

double all_reduce(const Ctx& c, std::string_view a, double s) {
  const int n = c.n;
  const double share = s / n, ws = n * std::min(s, c.p.window_half);
  // Every rank a processor: the parts a rank reduces or copies out of the peers' windows
  // were just written there by another processor. One peer's part: the staged exchange's
  // pattern (the probe's exchange rate covers this rank's copy in and its read out), each
  // further peer's a read out at the staged one-way rate; and the reduction's excess over
  // a copy, as reduce_scatter's below. Priced at the local rates instead, one shot at 2
  // ranks, 2 MiB, was predicted 91 us against 297-317 measured (Intel family 6 model 167).
  const auto excess = [&](double x) {
    return std::max(0.0, c.reduce(x, n * s) - c.copy(x, n * s));
  };
  const auto exchange = [&](double x) {
    return x / c.p.exchange_bw + (n - 2) * x / c.p.stage_bw;
  };
  if (a == "shm" && c.running())
    return c.chunks(s) * c.barrier() + exchange(s) + (n - 1) * excess(s);
  if (a == "shm_direct" && c.running())  // the shares reduced, then gathered: two exchanges
    return 2 * c.chunks(s) * c.barrier() + c.copy(share, ws) + 2 * exchange(share) +
           (n - 1) * excess(share);
  if (a == "shm")
    return c.chunks(s) * c.barrier() + c.copy(s, s) + (n - 1) * c.reduce(s, ws);
  if (a == "shm_direct")
    return 2 * c.chunks(s) * c.barrier() + c.copy(s, s) + (n - 1) * c.reduce(share, ws) +
           c.copy(share, ws) + c.copy((n - 1) * share, ws);
  if (a == "single_copy")
    return 3 * c.barrier() +
           c.peer_read((n - 1) * share, (n - 1) * std::ceil(share / kScratch), s) +
           (n - 1) * c.reduce(share, kScratch) + c.peer_read((n - 1) * share, n - 1, s);
  MsgTime t(c);
  if (a == "ring")
    return t.add(Step{double(n), double(n), 2 * share, double(n), share, share, 0, share}, n - 1)
        .add(Step{double(n), double(n), 2 * share}, n - 1)
        .us();
  if (a == "tree") {
    tree_levels(t, n, s, true);
    tree_levels(t, n, s, false);
    return t.us();
  }
  if (a != "rd" && a != "rhd") return -1;
  const int p2 = pow2_floor(n), extra = n - p2;
  if (extra > 0) {  // ranks outside the power of two fold into a partner first, unfold last
    t.add(Step{2.0 * extra, double(extra), s, double(extra), s, s, s});
    t.add(Step{2.0 * extra, double(extra), s, 0, 0, 0, s});
  }
  if (a == "rd")
    return t.add(Step{double(p2), double(p2), 2 * s, double(p2), s, s, s}, log2_up(p2)).us();
  if (a == "rhd") {  // halving exchanges of s/2, s/4, ..., s/p2, then doubling back
    double part = s;
    for (int i = 0; i < static_cast<int>(log2_up(p2)); ++i) {
      part /= 2;
      t.add(Step{double(p2), double(p2), 2 * part, double(p2), part, s, part})
          .add(Step{double(p2), double(p2), 2 * part, 0, 0, 0, part});
    }
    return t.us();
  }
  return -1;
}

double rooted(const Ctx& c, CollKind k, std::string_view a, double s) {
  const int n = c.n;
  if (k == CollKind::kBroadcast) {
    if (a == "shm") {  // root copies chunk c+1 in while the others copy chunk c out
      if (c.running())  // the first chunk in, then the stream at the staged rate
        return c.chunks(s) * c.barrier() + c.copy(std::min(s, c.p.window_half), s) +
               s / c.p.stage_bw;
      // Ranks share processors: the first chunk goes in alone (the others wait for it),
      // then the root's copies in and the others' copies out share the c processors.
      const double first = std::min(s, c.p.window_half);
      return c.chunks(s) * c.barrier() + (first + (n * s - first) / c.p.cpus) / c.copy_bw(s);
    }
    if (a == "single_copy") {  // priced in place, as MPI_Bcast and torch run it
      // The root writes the last 1/n of the message (whole pages) into each other rank's
      // buffer while those read the rest: every rank moves the same share, (n - 1)/n of
      // it (out of place the root copies its own message instead and the others read
      // all of it).
      const double tail = std::floor(s / n / 4096) * 4096;
      const double movers = tail > 0 ? n : n - 1;
      const double turns = c.p.cpus > 0 ? std::max(1.0, movers / c.p.cpus) : 1.0;
      return 2 * c.barrier() + turns * c.read_once(s - tail, 1, s);
    }
    if (a == "tree") {  // in place (out of place the root first copies its message)
      MsgTime t(c);
      tree_levels(t, n, s, false);
      return t.us();
    }
    return -1;
  }
  if (a == "shm")
    return c.chunks(s) * c.barrier() + c.copy(s, s) + (n - 1) * c.reduce(s, n * s);
  if (a == "tree") {
    MsgTime t(c);
    tree_levels(t, n, s, true);
    return t.us();
  }
  return -1;
}

// all_gather, reduce_scatter, all_to_all: `s` bytes per block, n blocks per rank.
double blocks(const Ctx& c, CollKind k, std::string_view a, double s) {
  const int n = c.n;
  const double all = n * s;
  if (k == CollKind::kAllGather) {
    if (a == "shm" && c.running())  // its own block, then the exchange of the others
      return c.chunks(s) * c.barrier() + c.copy(s, s) + (n - 1) * s / c.p.exchange_bw;
    if (a == "shm")  // its block, then the others': send buffer, window, receive buffer
      return c.chunks(s) * c.barrier() + c.copy(all, s + 2 * all);
    if (a == "single_copy")  // its own block copied, the others read
      return 2 * c.barrier() + c.copy(s, s) + c.peer_read((n - 1) * s, n - 1, s);
    if (a == "ring")  // its own block copied, then n - 1 steps
      return c.copy(s, s) + MsgTime(c).add(Step{double(n), double(n), 2 * s}, n - 1).us();
    return -1;
  }
  if (k == CollKind::kReduceScatter) {
    // Every rank a processor: the staged exchange's pattern (its blocks for the others
    // into its window, its own block's parts read out of the peers' windows; the probe's
    // exchange rate covers both copies), except that each part read is reduced with its
    // own (from private memory) instead of copied: the reduction's excess over a copy.
    if (a == "shm" && c.running())
      return c.chunks(all) * c.barrier() +
             (n - 1) * (s / c.p.exchange_bw + std::max(0.0, c.reduce(s, all) - c.copy(s, all)));
    if (a == "shm")
      return c.chunks(all) * c.barrier() + c.copy(all, all) + (n - 1) * c.reduce(s, all);
    if (a == "single_copy")
      return 2 * c.barrier() +
             c.peer_read((n - 1) * s, (n - 1) * std::ceil(s / kScratch), all) +
             (n - 1) * c.reduce(s, kScratch);
    if (a == "ring")
      return MsgTime(c).add(Step{double(n), double(n), 2 * s, double(n), s, s, 0, s}, n - 1).us();
    if (a == "rh") {  // a power of two of ranks: log2(n) exchanges of halving ranges
      if ((n & (n - 1)) != 0) return -1;
      MsgTime t(c);
      double part = all;
      for (int i = 0; i < static_cast<int>(log2_up(n)); ++i) {
        part /= 2;
        t.add(Step{double(n), double(n), 2 * part, double(n), part, all, part});
      }
      return t.us();
    }
    return -1;
  }
  // shm stages the n - 1 blocks for the others, a slot each in a window half.
  if (a == "shm" && c.running())  // its own block, then the exchange of the others
    return c.chunks(all - s) * c.barrier() + c.copy(s, s) + (n - 1) * s / c.p.exchange_bw;
  if (a == "shm")  // send to window, window to recv: the three buffers' footprint
    return c.chunks(all - s) * c.barrier() + 2 * c.copy(all, 3 * all);
  if (a == "single_copy")  // its own block copied; half of each pair read, half written
    return 2 * c.barrier() + c.copy(s, s) + c.peer_read((n - 1) * s, 2 * (n - 1), all);
  if (a == "pairwise")  // its own block copied, then n - 1 exchanges
    return c.copy(s, s) +
           MsgTime(c).add(Step{double(n), double(n), 2 * s, 0, 0, 0, s}, n - 1).us();
  return -1;
}

}  // namespace

double predict_us(const CostParams& p, CollKind kind, const char* algo, std::size_t bytes,
                  int nranks, const Capabilities& caps) {
  if (algo == nullptr || nranks < 1) return -1;
  if (nranks == 1) return kOpUs;
  const Ctx c{p, nranks, caps.windows};
  const std::string_view a = algo;
  const double s = double(bytes);
  double t = -1;
  switch (kind) {
    case CollKind::kAllReduce: t = all_reduce(c, a, s); break;
    case CollKind::kBroadcast:
    case CollKind::kReduce: t = rooted(c, kind, a, s); break;
    case CollKind::kAllGather:
    case CollKind::kReduceScatter:
    case CollKind::kAllToAll: t = blocks(c, kind, a, s); break;
    case CollKind::kBarrier:
      t = a == "shm" ? c.barrier() : a == "dissemination"
            ? MsgTime(c).add(Step{double(nranks), double(nranks)}, log2_up(nranks)).us()
            : -1;
      break;
    default: break;
  }
  return t < 0 ? -1 : t + kOpUs;
}

// Fixed order; doubles printed with %.9g.
std::string to_text(const CostParams& p) {
  char buf[768];
  std::snprintf(buf, sizeof buf,
                "sync_us=%.9g;wake_us=%.9g;switch_us=%.9g;net_sync_us=%.9g;net_bw=%.9g;"
                "copy_bw_cache=%.9g;copy_bw_mem=%.9g;reduce_bw_cache=%.9g;reduce_bw_mem=%.9g;"
                "peer_read_bw=%.9g;peer_read_bw_cache=%.9g;peer_read_us=%.9g;stage_bw=%.9g;"
                "ring_bw=%.9g;exchange_bw=%.9g;cache_bytes=%.9g;llc_bytes=%.9g;"
                "window_half=%.9g;chunk_bytes=%.9g;cpus=%d;measured=%d;net_measured=%d",
                p.sync_us, p.wake_us, p.switch_us, p.net_sync_us, p.net_bw, p.copy_bw_cache,
                p.copy_bw_mem, p.reduce_bw_cache, p.reduce_bw_mem, p.peer_read_bw,
                p.peer_read_bw_cache, p.peer_read_us, p.stage_bw, p.ring_bw, p.exchange_bw,
                p.cache_bytes, p.llc_bytes, p.window_half, p.chunk_bytes, p.cpus,
                p.measured ? 1 : 0, p.net_measured ? 1 : 0);
  return buf;
}

bool from_text(const std::string& text, CostParams& out) {
  CostParams p;
  double* fields[] = {&p.sync_us,       &p.wake_us,          &p.switch_us,
                      &p.net_sync_us,   &p.net_bw,           &p.copy_bw_cache,
                      &p.copy_bw_mem,   &p.reduce_bw_cache,  &p.reduce_bw_mem,
                      &p.peer_read_bw,  &p.peer_read_bw_cache, &p.peer_read_us,
                      &p.stage_bw,      &p.ring_bw,          &p.exchange_bw,
                      &p.cache_bytes,   &p.llc_bytes,        &p.window_half,
                      &p.chunk_bytes};
  const char* names[] = {"sync_us",       "wake_us",          "switch_us",
                         "net_sync_us",   "net_bw",           "copy_bw_cache",
                         "copy_bw_mem",   "reduce_bw_cache",  "reduce_bw_mem",
                         "peer_read_bw",  "peer_read_bw_cache", "peer_read_us",
                         "stage_bw",      "ring_bw",          "exchange_bw",
                         "cache_bytes",   "llc_bytes",        "window_half",
                         "chunk_bytes"};
  std::size_t pos = 0;
  auto next = [&](const char* name, double& v) {
    const std::size_t len = std::strlen(name);
    if (text.compare(pos, len, name) != 0 || pos + len >= text.size() || text[pos + len] != '=')
      return false;
    const char* start = text.c_str() + pos + len + 1;
    char* end = nullptr;
    v = std::strtod(start, &end);
    if (end == start || !std::isfinite(v) || v < 0) return false;
    pos = static_cast<std::size_t>(end - text.c_str());
    if (pos < text.size() && text[pos] == ';') ++pos;
    return true;
  };
  for (std::size_t i = 0; i < std::size(fields); ++i)
    if (!next(names[i], *fields[i]) || *fields[i] <= 0) return false;
  double cpus = 0, measured = 0, net_measured = 0;
  if (!next("cpus", cpus) || !next("measured", measured) || !next("net_measured", net_measured) ||
      pos != text.size())
    return false;
  p.cpus = static_cast<int>(cpus);
  p.measured = measured != 0;
  p.net_measured = net_measured != 0;
  out = p;
  return true;
}

CostParams with_hand_off_scale(const CostParams& p, double k) {
  CostParams out = p;
  out.sync_us *= k;
  out.stage_bw /= k;
  out.ring_bw /= k;
  out.exchange_bw /= k;
  out.peer_read_bw_cache = std::max(p.peer_read_bw, p.peer_read_bw_cache / k);
  return out;
}

}  // namespace chorus::algo
