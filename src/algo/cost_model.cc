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

struct Ctx {
  const CostParams& p;
  int n;
  bool windows;
  // Ranks per processor when the ranks outnumber the processors (>= 1): every rank's
  // copying and reducing shares a core.
  double over() const { return p.cpus > 0 && n > p.cpus ? double(n) / p.cpus : 1.0; }
  double copy(double x, double ws) const {
    return over() * x / (ws <= p.cache_bytes ? p.copy_bw_cache : p.copy_bw_mem);
  }
  double reduce(double x, double ws) const {
    return over() * x / (ws <= p.cache_bytes ? p.reduce_bw_cache : p.reduce_bw_mem);
  }
  // `calls` process_vm_readv calls reading x bytes in all.
  double peer_read(double x, double calls) const {
    return over() * (calls * p.peer_read_us + x / p.peer_read_bw);
  }
  // A window barrier: every rank's arrival crosses a cache line; with more ranks than
  // processors, ranks must be woken to arrive.
  double barrier() const {
    if (n <= 1) return 0;
    if (p.cpus > 0 && n > p.cpus) return p.wake_us * double(n) / p.cpus + p.sync_us * n;
    return p.sync_us * n;
  }
  // One message hand-off and bandwidth of the medium: TCP, or the shm byte rings (a copy
  // in and a copy out per hop) when the transport has windows (one host).
  double msg_sync() const {
    if (!windows) return p.net_sync_us;
    return over() > 1 ? p.wake_us + 2 * p.sync_us : 2 * p.sync_us;
  }
  double msg(double x) const {
    return over() * x / (windows ? p.copy_bw_mem / 2 : p.net_bw);
  }
  double chunks(double staged) const {
    return std::max(1.0, std::ceil(staged / std::max(64.0, p.window_half)));
  }
};

double log2_up(int n) { return n <= 1 ? 0 : std::ceil(std::log2(double(n))); }

double all_reduce(const Ctx& c, std::string_view a, double s) {
  const int n = c.n;
  const double share = s / n, ws = n * std::min(s, c.p.window_half);
  if (a == "shm")
    return c.chunks(s) * c.barrier() + c.copy(s, s) + (n - 1) * c.reduce(s, ws);
  if (a == "shm_direct")
    return 2 * c.chunks(s) * c.barrier() + c.copy(s, s) + (n - 1) * c.reduce(share, ws) +
           c.copy(share, ws) + c.copy((n - 1) * share, ws);
  if (a == "single_copy")
    return 3 * c.barrier() + c.peer_read((n - 1) * share, (n - 1) * std::ceil(share / kScratch)) +
           (n - 1) * c.reduce(share, kScratch) + c.peer_read((n - 1) * share, n - 1);
  if (a == "ring")
    return 2 * (n - 1) * (c.msg_sync() + c.msg(share)) + (n - 1) * c.reduce(share, share);
  if (a == "rhd") {
    const bool pow2 = (n & (n - 1)) == 0;
    return (2 * log2_up(n) + (pow2 ? 0 : 2)) * c.msg_sync() + c.msg(2 * (n - 1) * share) +
           (pow2 ? 0 : c.msg(2 * s)) + c.reduce((n - 1) * share, s);
  }
  if (a == "tree")
    return 2 * log2_up(n) * (c.msg_sync() + c.msg(s)) + log2_up(n) * c.reduce(s, s);
  return -1;
}

double rooted(const Ctx& c, CollKind k, std::string_view a, double s) {
  const int n = c.n;
  if (k == CollKind::kBroadcast) {
    if (a == "shm") {  // root copies chunk c+1 in while the others copy chunk c out
      const double pipelined = c.over() > 1 ? c.copy(s, s) : c.copy(std::min(s, c.p.window_half), s);
      return c.chunks(s) * c.barrier() + c.copy(s, s) + pipelined;
    }
    if (a == "single_copy") {
      const double readers = c.p.cpus > 0 ? std::max(1.0, double(n - 1) / c.p.cpus) : 1.0;
      return 2 * c.barrier() + readers * (c.p.peer_read_us + s / c.p.peer_read_bw);
    }
    if (a == "tree") return log2_up(n) * (c.msg_sync() + c.msg(s));
    return -1;
  }
  if (a == "shm")
    return c.chunks(s) * c.barrier() + c.copy(s, s) + (n - 1) * c.reduce(s, n * s);
  if (a == "tree")
    return log2_up(n) * (c.msg_sync() + c.msg(s) + c.reduce(s, s));
  return -1;
}

// all_gather, reduce_scatter, all_to_all: `s` bytes per block, n blocks per rank.
double blocks(const Ctx& c, CollKind k, std::string_view a, double s) {
  const int n = c.n;
  const double all = n * s;
  if (k == CollKind::kAllGather) {
    if (a == "shm") return c.chunks(s) * c.barrier() + c.copy(s, s) + c.copy((n - 1) * s, all);
    if (a == "single_copy") return 2 * c.barrier() + c.peer_read((n - 1) * s, n - 1);
    if (a == "ring") return (n - 1) * (c.msg_sync() + c.msg(s));
    return -1;
  }
  if (k == CollKind::kReduceScatter) {
    if (a == "shm") return c.chunks(all) * c.barrier() + c.copy(all, all) + (n - 1) * c.reduce(s, all);
    if (a == "single_copy")
      return 2 * c.barrier() + c.peer_read((n - 1) * s, (n - 1) * std::ceil(s / kScratch)) +
             (n - 1) * c.reduce(s, kScratch);
    if (a == "ring") return (n - 1) * (c.msg_sync() + c.msg(s) + c.reduce(s, s));
    return -1;
  }
  if (a == "shm") return c.chunks(all) * c.barrier() + c.copy(all, all) + c.copy(all, all);
  if (a == "single_copy") return 2 * c.barrier() + c.peer_read((n - 1) * s, n - 1);
  if (a == "pairwise") return (n - 1) * (c.msg_sync() + c.msg(s));
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
      t = a == "shm" ? c.barrier() : a == "dissemination" ? log2_up(nranks) * c.msg_sync() : -1;
      break;
    default: break;
  }
  return t < 0 ? -1 : t + kOpUs;
}

// Fixed order; doubles printed with %.9g.
std::string to_text(const CostParams& p) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "sync_us=%.9g;wake_us=%.9g;net_sync_us=%.9g;net_bw=%.9g;copy_bw_cache=%.9g;"
                "copy_bw_mem=%.9g;reduce_bw_cache=%.9g;reduce_bw_mem=%.9g;peer_read_bw=%.9g;"
                "peer_read_us=%.9g;cache_bytes=%.9g;window_half=%.9g;cpus=%d;measured=%d",
                p.sync_us, p.wake_us, p.net_sync_us, p.net_bw, p.copy_bw_cache, p.copy_bw_mem,
                p.reduce_bw_cache, p.reduce_bw_mem, p.peer_read_bw, p.peer_read_us,
                p.cache_bytes, p.window_half, p.cpus, p.measured ? 1 : 0);
  return buf;
}

bool from_text(const std::string& text, CostParams& out) {
  CostParams p;
  double* fields[] = {&p.sync_us, &p.wake_us, &p.net_sync_us, &p.net_bw, &p.copy_bw_cache,
                      &p.copy_bw_mem, &p.reduce_bw_cache, &p.reduce_bw_mem, &p.peer_read_bw,
                      &p.peer_read_us, &p.cache_bytes, &p.window_half};
  const char* names[] = {"sync_us", "wake_us", "net_sync_us", "net_bw", "copy_bw_cache",
                         "copy_bw_mem", "reduce_bw_cache", "reduce_bw_mem", "peer_read_bw",
                         "peer_read_us", "cache_bytes", "window_half"};
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
  double cpus = 0, measured = 0;
  if (!next("cpus", cpus) || !next("measured", measured) || pos != text.size()) return false;
  p.cpus = static_cast<int>(cpus);
  p.measured = measured != 0;
  out = p;
  return true;
}

}  // namespace chorus::algo
