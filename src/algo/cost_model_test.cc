// The cost model: its text form, and the shape of its predictions (which algorithm wins
// where) for given parameters. No timing: the model is arithmetic.
#include "algo/cost_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string_view>
#include <utility>

#include "algo/selector.h"

namespace chorus::algo {
namespace {

CostParams params(int cpus) {
  CostParams p;
  p.cpus = cpus;
  return p;
}

const Capabilities kShm{true, true};
const Capabilities kTcp{};

TEST(CostModel, TextRoundTrip) {
  CostParams p = params(8);
  p.sync_us = 0.125;
  p.peer_read_bw = 7777;
  p.peer_read_bw_cache = 9999;
  p.stage_bw = 4321;
  p.exchange_bw = 8765;
  p.ring_bw = 5432;
  p.switch_us = 1.25;
  p.chunk_bytes = 256 << 10;
  p.measured = true;
  p.net_measured = true;
  CostParams q;
  ASSERT_TRUE(from_text(to_text(p), q)) << to_text(p);
  EXPECT_EQ(to_text(p), to_text(q));
  EXPECT_EQ(q.cpus, 8);
  EXPECT_TRUE(q.measured);
  EXPECT_TRUE(q.net_measured);
  EXPECT_DOUBLE_EQ(q.sync_us, 0.125);
  EXPECT_DOUBLE_EQ(q.chunk_bytes, 256 << 10);
  EXPECT_DOUBLE_EQ(q.stage_bw, 4321);
  EXPECT_DOUBLE_EQ(q.peer_read_bw_cache, 9999);
  EXPECT_DOUBLE_EQ(q.exchange_bw, 8765);
  EXPECT_DOUBLE_EQ(q.ring_bw, 5432);
  EXPECT_DOUBLE_EQ(q.switch_us, 1.25);
}

// With more ranks than processors a rank waiting at a window barrier or on the shm rings
// polls with sched_yield(): each processor switches between its ranks (switch_us), nobody
// sleeps, so wake_us does not price it; over TCP a waiter sleeps in poll() and wake_us does.
// (4 ranks on 2 vCPUs, AMD EPYC: a switch 1.37 us and a futex wake-up 14.5 us as probed;
// the mailbox all_to_all of 64 B measured 4.3-4.4 us, predicted 31.7 us with wake-ups.)
TEST(CostModel, OversubscribedShmWaitsSwitchTcpWaitsWake) {
  CostParams cheap = params(2), dear = params(2);
  cheap.switch_us = 1;
  dear.switch_us = 10;
  cheap.wake_us = dear.wake_us = 15;
  cheap.net_measured = dear.net_measured = true;
  for (const char* a : {"shm", "tree"}) {
    const double c = predict_us(cheap, CollKind::kBroadcast, a, 64, 4, kShm);
    const double d = predict_us(dear, CollKind::kBroadcast, a, 64, 4, kShm);
    EXPECT_GT(d, c + 9) << a;  // at least one switch per processor more
  }
  // One window barrier of 4 ranks on 2 processors: two switches and four arrivals.
  const double mailbox = predict_us(cheap, CollKind::kAllToAll, "shm", 16, 4, kShm);
  EXPECT_NEAR(mailbox, predict_us(cheap, CollKind::kAllToAll, "shm", 16, 1, kShm) +
                           2 * cheap.switch_us + 4 * cheap.sync_us,
              0.5);
  // Over TCP the switch figure changes nothing.
  EXPECT_DOUBLE_EQ(predict_us(cheap, CollKind::kAllReduce, "ring", 1 << 20, 4, kTcp),
                   predict_us(dear, CollKind::kAllReduce, "ring", 1 << 20, 4, kTcp));
  // With a processor per rank nobody switches.
  EXPECT_DOUBLE_EQ(predict_us(cheap, CollKind::kBroadcast, "shm", 64, 2, kShm),
                   predict_us(dear, CollKind::kBroadcast, "shm", 64, 2, kShm));
}

// With a processor per rank, a window broadcast streams at the staged rate through the
// window halves (stage_bw) and the tree's one-way levels at the rings' (ring_bw), each as
// the probe measured it; with ranks sharing processors neither does (waiting ranks sleep
// there, and the copies run at the copy rates).
TEST(CostModel, StagedRatesPriceOneWayStreams) {
  const double s = 2 << 20;
  const double extra = s / 6000 - s / 12000;
  const struct {
    const char* algo;
    double CostParams::*rate;
  } cases[] = {{"shm", &CostParams::stage_bw}, {"tree", &CostParams::ring_bw}};
  for (const auto& c : cases) {
    CostParams fast = params(2), slow = params(2);
    fast.window_half = slow.window_half = 256 << 10;
    fast.*c.rate = 12000;
    slow.*c.rate = 6000;
    const double f = predict_us(fast, CollKind::kBroadcast, c.algo, 2 << 20, 2, kShm);
    const double w = predict_us(slow, CollKind::kBroadcast, c.algo, 2 << 20, 2, kShm);
    EXPECT_NEAR(w - f, extra, extra * 0.01) << c.algo;
    EXPECT_DOUBLE_EQ(predict_us(fast, CollKind::kBroadcast, c.algo, 2 << 20, 4, kShm),
                     predict_us(slow, CollKind::kBroadcast, c.algo, 2 << 20, 4, kShm))
        << c.algo;
    // An exchange (every rank sends and receives: the ring's steps) is not a one-way
    // stream: its rate is exchange_bw (ExchangeRatePricesTwoWayStreams).
    EXPECT_DOUBLE_EQ(predict_us(fast, CollKind::kAllGather, "ring", 1 << 20, 2, kShm),
                     predict_us(slow, CollKind::kAllGather, "ring", 1 << 20, 2, kShm));
  }
  // The window broadcast does not depend on the rings' rate, nor the tree on the windows'.
  CostParams a = params(2), b = params(2);
  b.ring_bw = 2 * a.ring_bw;
  EXPECT_DOUBLE_EQ(predict_us(a, CollKind::kBroadcast, "shm", 2 << 20, 2, kShm),
                   predict_us(b, CollKind::kBroadcast, "shm", 2 << 20, 2, kShm));
  b = params(2);
  b.stage_bw = 2 * a.stage_bw;
  EXPECT_DOUBLE_EQ(predict_us(a, CollKind::kBroadcast, "tree", 2 << 20, 2, kShm),
                   predict_us(b, CollKind::kBroadcast, "tree", 2 << 20, 2, kShm));
}

// With a processor per rank, the window all_gather and all_to_all past their own block, and
// the exchanges over the rings (all_gather's ring, all_to_all's pairwise), run at the
// staged exchange rate the probe measured; with ranks sharing processors they do not.
TEST(CostModel, ExchangeRatePricesTwoWayStreams) {
  CostParams fast = params(2), slow = params(2);
  fast.window_half = slow.window_half = 256 << 10;
  fast.exchange_bw = 12000;
  slow.exchange_bw = 3000;
  const double s = 1 << 20;
  const struct {
    CollKind kind;
    const char* algo;
  } cases[] = {{CollKind::kAllGather, "shm"},
               {CollKind::kAllGather, "ring"},
               {CollKind::kAllToAll, "shm"},
               {CollKind::kAllToAll, "pairwise"}};
  for (const auto& c : cases) {
    const double f = predict_us(fast, c.kind, c.algo, s, 2, kShm);
    const double w = predict_us(slow, c.kind, c.algo, s, 2, kShm);
    // One block each way at 2 ranks: the slower exchange adds s/3000 - s/12000 (the window
    // form copies the peer's block out at the rate), or half that (the ring's step moves
    // both directions at twice the rate).
    const double extra = s / 3000 - s / 12000;
    EXPECT_GT(w - f, extra * 0.49) << c.algo;
    EXPECT_LT(w - f, extra * 1.01) << c.algo;
    EXPECT_DOUBLE_EQ(predict_us(fast, c.kind, c.algo, s, 4, kShm),
                     predict_us(slow, c.kind, c.algo, s, 4, kShm))
        << c.algo;
  }
}

TEST(CostModel, TextRejectsMalformed) {
  CostParams q;
  q.sync_us = 42;
  const std::string good = to_text(params(2));
  EXPECT_FALSE(from_text("", q));
  EXPECT_FALSE(from_text("garbage", q));
  EXPECT_FALSE(from_text(good + ";extra=1", q));
  EXPECT_FALSE(from_text(good.substr(0, good.size() / 2), q));
  std::string neg = good;
  neg.replace(neg.find("sync_us=") + 8, 0, "-");
  EXPECT_FALSE(from_text(neg, q));
  EXPECT_DOUBLE_EQ(q.sync_us, 42);  // untouched
}

TEST(CostModel, NoFormulaIsNegative) {
  const CostParams p = params(4);
  EXPECT_LT(predict_us(p, CollKind::kAllReduce, "hier", 1024, 4, kShm), 0);
  EXPECT_LT(predict_us(p, CollKind::kAllToAllV, "pairwise", 1024, 4, kShm), 0);
  EXPECT_LT(predict_us(p, CollKind::kAllReduce, "nonsense", 1024, 4, kShm), 0);
  EXPECT_GT(predict_us(p, CollKind::kAllReduce, "ring", 1024, 1, kShm), 0);
}

// Every formula terminates and is finite for an empty message and odd rank counts.
TEST(CostModel, EmptyAndOddRankCounts) {
  CostParams p = params(2);
  p.net_measured = true;
  for (const char* a : {"ring", "rd", "rhd", "tree", "shm", "shm_direct", "single_copy"})
    for (int n : {2, 3, 5, 8})
      for (std::size_t bytes : {std::size_t(0), std::size_t(4096)}) {
        const double t = predict_us(p, CollKind::kAllReduce, a, bytes, n, kTcp);
        EXPECT_TRUE(std::isfinite(t) && t > 0) << a << " n=" << n << " bytes=" << bytes;
      }
  for (int n : {2, 4, 8}) {
    EXPECT_GT(predict_us(p, CollKind::kReduceScatter, "rh", 0, n, kTcp), 0);
    EXPECT_GT(predict_us(p, CollKind::kBroadcast, "tree", 0, n, kTcp), 0);
  }
}

TEST(CostModel, GrowsWithSize) {
  const CostParams p = params(4);
  for (const char* a : {"shm", "shm_direct", "single_copy", "ring", "rhd", "tree"}) {
    double last = 0;
    for (std::size_t bytes = 8; bytes <= (64u << 20); bytes *= 8) {
      const double t = predict_us(p, CollKind::kAllReduce, a, bytes, 4, kShm);
      EXPECT_GE(t, last) << a << " at " << bytes;
      last = t;
    }
  }
}

// Every out-of-place all_gather and all_to_all copies the rank's own block from send to recv
// besides moving the others': the copy rate enters each prediction once, for one block (in
// cache at 64 KiB per block, out of cache at 4 MiB): single copy, the ring, pairwise (4
// ranks on 4 processors, where the message steps stream at the exchange or ring rate, so
// only the own block's copy follows the copy rate). A broadcast is priced in place, as
// MPI_Bcast and torch run it: the tree's root copies nothing of its own.
TEST(CostModel, BlockAlgorithmsCopyTheirOwnBlock) {
  CostParams fast = params(4), slow = params(4);
  slow.copy_bw_cache = fast.copy_bw_cache / 2;
  slow.copy_bw_mem = fast.copy_bw_mem / 2;
  const std::pair<CollKind, const char*> cases[] = {{CollKind::kAllGather, "single_copy"},
                                                    {CollKind::kAllToAll, "single_copy"},
                                                    {CollKind::kAllGather, "ring"},
                                                    {CollKind::kAllToAll, "pairwise"}};
  for (const auto& [k, algo] : cases)
    for (double s : {double(64 << 10), double(4 << 20)}) {
      const std::size_t bytes = static_cast<std::size_t>(s);
      const double own = s / (s <= fast.cache_bytes ? slow.copy_bw_cache : slow.copy_bw_mem) -
                         s / (s <= fast.cache_bytes ? fast.copy_bw_cache : fast.copy_bw_mem);
      EXPECT_NEAR(predict_us(slow, k, algo, bytes, 4, kShm) -
                      predict_us(fast, k, algo, bytes, 4, kShm),
                  own, 1e-6 * own)
          << to_string(k) << " " << algo << " " << bytes;
    }
  for (std::size_t bytes : {std::size_t(64) << 10, std::size_t(4) << 20})
    EXPECT_DOUBLE_EQ(predict_us(slow, CollKind::kBroadcast, "tree", bytes, 4, kShm),
                     predict_us(fast, CollKind::kBroadcast, "tree", bytes, 4, kShm));
}

// Over the shm rings the engine hands a message over a ring quarter at a time, each a flag
// the receiver waits for (as each window chunk is a barrier); over TCP it streams. 2 ranks
// on 4 processors, the ring all_gather of a 4 MiB block: one exchange of 16 quarters.
TEST(CostModel, RingMessagesPayAHandOffPerRingQuarter) {
  CostParams whole = params(4), quarters = params(4);
  whole.ring_quarter = 64 << 20;  // a message in one hand-off
  quarters.ring_quarter = 256 << 10;
  const std::size_t bytes = 4 << 20;
  const double extra = 15 * 2 * quarters.sync_us;
  EXPECT_NEAR(predict_us(quarters, CollKind::kAllGather, "ring", bytes, 2, kShm) -
                  predict_us(whole, CollKind::kAllGather, "ring", bytes, 2, kShm),
              extra, 1e-6 * extra);
  EXPECT_DOUBLE_EQ(predict_us(quarters, CollKind::kAllGather, "ring", bytes, 2, kTcp),
                   predict_us(whole, CollKind::kAllGather, "ring", bytes, 2, kTcp));
  // A message within one quarter pays one hand-off either way.
  EXPECT_DOUBLE_EQ(predict_us(quarters, CollKind::kAllGather, "ring", 64 << 10, 2, kShm),
                   predict_us(whole, CollKind::kAllGather, "ring", 64 << 10, 2, kShm));
}

// With the peers' buffers mapped, single copy's reads are memcpy calls: the system call's
// rate and fixed cost drop out, the copy rate of the bytes read comes in. 4 ranks on 4
// processors, all_gather of blocks in and out of cache.
TEST(CostModel, MappedPeersReadAtTheCopyRate) {
  CostParams heap = params(4);
  CostParams mapped = heap;
  mapped.mapped_peers = true;
  for (double s : {double(64 << 10), double(4 << 20)}) {
    const std::size_t bytes = static_cast<std::size_t>(s);
    const double read = 3 * s;
    const bool fits = read <= heap.cache_bytes;
    const double rate = fits ? heap.copy_bw_cache : heap.copy_bw_mem;
    const double syscall_rate = fits ? heap.peer_read_bw_cache : heap.peer_read_bw;
    const double saved = (3 * heap.peer_read_us + read / syscall_rate) - (3 * 0.1 + read / rate);
    EXPECT_NEAR(predict_us(heap, CollKind::kAllGather, "single_copy", bytes, 4, kShm) -
                    predict_us(mapped, CollKind::kAllGather, "single_copy", bytes, 4, kShm),
                saved, 1e-6 * std::abs(saved))
        << bytes;
    // A slower system call changes nothing once the peers are mapped.
    CostParams slow = mapped;
    slow.peer_read_bw /= 4;
    slow.peer_read_bw_cache /= 4;
    slow.peer_read_us *= 4;
    EXPECT_EQ(predict_us(slow, CollKind::kAllGather, "single_copy", bytes, 4, kShm),
              predict_us(mapped, CollKind::kAllGather, "single_copy", bytes, 4, kShm));
  }
  // The staged algorithms do not read peers: unchanged.
  EXPECT_EQ(predict_us(heap, CollKind::kAllGather, "shm", 1 << 20, 4, kShm),
            predict_us(mapped, CollKind::kAllGather, "shm", 1 << 20, 4, kShm));
}

// The staged reduce_scatter with a processor per rank is the staged exchange's pattern
// (its rate covers the copy into the window and the read out of the peer's) with each
// part read reduced instead of copied: where reducing costs what copying does, the copy
// and reduction rates drop out of its time, however slow both are.
TEST(CostModel, StagedReduceScatterPaysTheReductionsExcessOverTheExchange) {
  CostParams fast = params(4);
  fast.reduce_bw_cache = fast.copy_bw_cache;
  fast.reduce_bw_mem = fast.copy_bw_mem;
  CostParams slow = fast;
  for (double* bw : {&slow.copy_bw_cache, &slow.copy_bw_mem, &slow.reduce_bw_cache,
                     &slow.reduce_bw_mem})
    *bw /= 4;
  for (std::size_t bytes : {std::size_t(64) << 10, std::size_t(4) << 20}) {
    const double f = predict_us(fast, CollKind::kReduceScatter, "shm", bytes, 4, kShm);
    EXPECT_GT(f, 0);
    EXPECT_NEAR(predict_us(slow, CollKind::kReduceScatter, "shm", bytes, 4, kShm), f, 1e-9 * f)
        << bytes;
  }
  // A reduction slower than a copy adds its excess, once per peer's part.
  CostParams dear = fast;
  dear.reduce_bw_cache = fast.copy_bw_cache / 2;
  const double s = 64 << 10;
  EXPECT_NEAR(predict_us(dear, CollKind::kReduceScatter, "shm", 64 << 10, 4, kShm) -
                  predict_us(fast, CollKind::kReduceScatter, "shm", 64 << 10, 4, kShm),
              3 * s / fast.copy_bw_cache, 1e-6 * s);
}

// Small all_reduce: one barrier (shm) beats two (shm_direct) and three (single_copy);
// large: single copy moves the fewest bytes.
TEST(CostModel, AllReduceCrossovers) {
  const CostParams p = params(4);
  auto t = [&](const char* a, std::size_t b) {
    return predict_us(p, CollKind::kAllReduce, a, b, 4, kShm);
  };
  EXPECT_LT(t("shm", 64), t("shm_direct", 64));
  EXPECT_LT(t("shm", 64), t("single_copy", 64));
  EXPECT_LT(t("single_copy", 64 << 20), t("shm", 64 << 20));
  EXPECT_LT(t("shm_direct", 64 << 20), t("shm", 64 << 20));
}

// Between running ranks the window all_reduce reads the peers' parts where another
// processor has just written them: one peer's at the staged exchange's rate, each further
// peer's at the one-way staged rate (one shot, 2 MiB at 2 ranks: 91 us at the local rates,
// 297-317 measured). Ranks sharing processors keep the local rates.
TEST(CostModel, WindowAllReduceReadsPeersPartsAtTheStagedRates) {
  const CostParams base = params(4);
  CostParams slow_exchange = base, slow_stage = base;
  slow_exchange.exchange_bw /= 2;
  slow_stage.stage_bw /= 2;
  const double s = 2 << 20;
  auto t = [&](const CostParams& p, const char* a, int n) {
    return predict_us(p, CollKind::kAllReduce, a, static_cast<std::size_t>(s), n, kShm);
  };
  for (const char* a : {"shm", "shm_direct"}) {
    // shm exchanges the message once, shm_direct its share twice: s / E either way at 2.
    EXPECT_NEAR(t(slow_exchange, a, 2) - t(base, a, 2), s / base.exchange_bw, 1e-6 * s) << a;
    EXPECT_DOUBLE_EQ(t(slow_stage, a, 2), t(base, a, 2)) << a;
    const double share = std::string_view(a) == "shm" ? s : 2 * s / 4;
    EXPECT_NEAR(t(slow_stage, a, 4) - t(base, a, 4), 2 * share / base.stage_bw, 1e-6 * s) << a;
    EXPECT_DOUBLE_EQ(t(slow_exchange, a, 8), t(base, a, 8)) << a;  // 8 ranks on 4
  }
}

// More ranks than processors: barriers need wake-ups, so the same work costs more.
TEST(CostModel, OversubscriptionCosts) {
  for (const char* a : {"shm", "shm_direct"}) {
    const double fits = predict_us(params(8), CollKind::kAllReduce, a, 4096, 8, kShm);
    const double over = predict_us(params(2), CollKind::kAllReduce, a, 4096, 8, kShm);
    EXPECT_GT(over, 2 * fits) << a;
  }
}

// Single copy reads a peer's buffer where the peer's own writes left it: within the cache
// at the rate of a source another processor has just written (peer_read_bw_cache), beyond
// it at the rate of such a source beyond the cache (peer_read_bw). Ranks sharing a processor share its cache: a
// source that fits with a processor per rank does not with two ranks on each.
TEST(CostModel, PeerReadsOfCachedSourcesAtTheWrittenRate) {
  const CostParams base = params(2);
  CostParams cached = base, memory = base;
  cached.peer_read_bw_cache /= 2;
  memory.peer_read_bw /= 2;
  auto bcast = [](const CostParams& p, double s, int n) {
    return predict_us(p, CollKind::kBroadcast, "single_copy", static_cast<std::size_t>(s), n,
                      kShm);
  };
  const double small = 0.75 * base.cache_bytes, large = 4 * base.cache_bytes;
  // 2 ranks on 2 processors, in place: each rank moves half the message (the root writes
  // the second half, whole pages, while the other reads the first). The small source is
  // read at the cached rate, the large one at the rate beyond the cache; each rate halved
  // costs one more read of that half.
  EXPECT_NEAR(bcast(cached, small, 2) - bcast(base, small, 2),
              small / 2 / base.peer_read_bw_cache, 1e-6 * small);
  EXPECT_EQ(bcast(memory, small, 2), bcast(base, small, 2));
  EXPECT_NEAR(bcast(memory, large, 2) - bcast(base, large, 2), large / 2 / base.peer_read_bw,
              1e-6 * large);
  EXPECT_EQ(bcast(cached, large, 2), bcast(base, large, 2));
  // Less than a page for each rank: the root pushes nothing and the other reads it all.
  const double tiny = 6 << 10;
  EXPECT_NEAR(bcast(cached, tiny, 2) - bcast(base, tiny, 2), tiny / base.peer_read_bw_cache,
              1e-6 * tiny);
  // 4 ranks on 2 processors: the small source no longer fits its half of the cache.
  EXPECT_EQ(bcast(cached, small, 4), bcast(base, small, 4));
  EXPECT_GT(bcast(memory, small, 4), bcast(base, small, 4));
  // The copies too: all_gather's own block in cache at 2 ranks, out of it at 4 on 2.
  CostParams slow_mem = base;
  slow_mem.copy_bw_mem /= 2;
  EXPECT_EQ(predict_us(slow_mem, CollKind::kAllGather, "shm", 256 << 10, 2, kShm),
            predict_us(base, CollKind::kAllGather, "shm", 256 << 10, 2, kShm));
  EXPECT_GT(predict_us(slow_mem, CollKind::kAllGather, "shm", 256 << 10, 4, kShm),
            predict_us(base, CollKind::kAllGather, "shm", 256 << 10, 4, kShm));
}

// With more ranks than processors, a window all_gather or all_to_all touches the send
// buffer, the window and the receive buffer in one call, on every rank of a processor:
// blocks whose n-block buffers fit the cache alone spill with all three (4 ranks on 2
// vCPUs, Intel family 6 model 167, all_to_all of 512 KiB per rank: 117-127 us measured,
// 41 predicted at the in-cache rate).
TEST(CostModel, OversubscribedWindowBlocksCountTheirWholeFootprint) {
  const CostParams base = params(2);  // 1 MiB of cache per processor
  CostParams slow_mem = base, slow_cache = base;
  slow_mem.copy_bw_mem /= 2;
  slow_cache.copy_bw_cache /= 2;
  const std::size_t block = 64 << 10;  // 4 blocks: 256 KiB per buffer, 512 KiB per processor
  for (CollKind k : {CollKind::kAllGather, CollKind::kAllToAll}) {
    const double t = predict_us(base, k, "shm", block, 4, kShm);
    EXPECT_GT(predict_us(slow_mem, k, "shm", block, 4, kShm), t) << to_string(k);
    EXPECT_EQ(predict_us(slow_cache, k, "shm", block, 4, kShm), t) << to_string(k);
  }
}

// With more ranks than processors the window broadcast's first chunk goes in alone, then
// the root's copies in and the others' copies out share the processors: one chunk of S
// over n ranks on c processors costs (S + (n - 1)S/c)/C, each copy counted once (4 ranks
// on 2 vCPUs, Intel family 6 model 167, 2 MiB: 352-418 us measured, 345 predicted this
// way; counting every rank's copies on each processor predicted 552).
TEST(CostModel, OversubscribedWindowBroadcastSharesItsCopies) {
  const CostParams base = params(2);
  CostParams fast = base;
  fast.copy_bw_cache *= 2;
  fast.copy_bw_mem *= 2;
  for (int n : {3, 4, 8}) {
    const double s = 64 << 10;  // one chunk, in cache
    const double copies = s + (n - 1) * s / 2;
    EXPECT_NEAR(predict_us(base, CollKind::kBroadcast, "shm", 64 << 10, n, kShm) -
                    predict_us(fast, CollKind::kBroadcast, "shm", 64 << 10, n, kShm),
                copies / (2 * base.copy_bw_cache), 1e-6 * copies)
        << n;
  }
}

// A host running the ranks' processors apart makes every hand-off of lines the other
// processor just wrote dearer: the flag, the staged streams and the single-copy reads of
// a peer's cached writes (never below the rate beyond the cache); copies, reductions and
// reads beyond the cache keep their figures.
TEST(CostModel, HandOffScaleTouchesOnlyCrossProcessorFigures) {
  CostParams p = params(2);
  p.peer_read_bw = 4000;
  p.peer_read_bw_cache = 12000;
  const CostParams k3 = with_hand_off_scale(p, 3), k10 = with_hand_off_scale(p, 10);
  EXPECT_DOUBLE_EQ(k3.sync_us, 3 * p.sync_us);
  EXPECT_DOUBLE_EQ(k3.stage_bw, p.stage_bw / 3);
  EXPECT_DOUBLE_EQ(k3.ring_bw, p.ring_bw / 3);
  EXPECT_DOUBLE_EQ(k3.exchange_bw, p.exchange_bw / 3);
  EXPECT_DOUBLE_EQ(k3.peer_read_bw_cache, 4000);
  EXPECT_DOUBLE_EQ(with_hand_off_scale(p, 2).peer_read_bw_cache, 6000);
  EXPECT_DOUBLE_EQ(k10.peer_read_bw_cache, 4000);
  EXPECT_DOUBLE_EQ(k10.peer_read_bw, 4000);
  EXPECT_DOUBLE_EQ(k10.copy_bw_cache, p.copy_bw_cache);
  EXPECT_DOUBLE_EQ(k10.reduce_bw_mem, p.reduce_bw_mem);
  EXPECT_EQ(to_text(with_hand_off_scale(p, 1)), to_text(p));
}

// The medium: a message step over TCP costs net_sync_us, over the shm rings far less.
TEST(CostModel, MediumLatency) {
  CostParams p = params(4);
  p.net_sync_us = 100;
  const double tcp = predict_us(p, CollKind::kAllReduce, "rhd", 8, 4, kTcp);
  const double shm = predict_us(p, CollKind::kAllReduce, "rhd", 8, 4, kShm);
  EXPECT_GT(tcp, 4 * 100);
  EXPECT_LT(shm, 100);
}

CostParams tcp_host(int cpus) {
  CostParams p = params(cpus);
  p.net_sync_us = 5;
  p.wake_us = 10;
  p.net_bw = 6000;
  p.net_measured = true;
  return p;
}

// Over TCP, the message algorithms: one exchange (rd) beats the ring's two steps and the
// tree's two levels for small messages; for large ones, an unchunked algorithm's whole
// messages fall out of cache and the chunked ring wins.
TEST(CostModel, MessageAlgorithms) {
  const CostParams p = tcp_host(8);
  auto t = [&](const char* a, std::size_t b, int n) {
    return predict_us(p, CollKind::kAllReduce, a, b, n, kTcp);
  };
  EXPECT_LT(t("rd", 64, 2), t("ring", 64, 2));
  EXPECT_LT(t("rd", 64, 2), t("tree", 64, 2));
  EXPECT_LT(t("ring", 64 << 20, 2), t("rd", 64 << 20, 2));
  EXPECT_LT(t("ring", 64 << 20, 4), t("rhd", 64 << 20, 4));
  EXPECT_LT(predict_us(p, CollKind::kReduceScatter, "rh", 1024, 4, kTcp),
            predict_us(p, CollKind::kReduceScatter, "ring", 1024, 4, kTcp));
  EXPECT_LT(predict_us(p, CollKind::kReduceScatter, "rh", 1024, 3, kTcp), 0);  // not a power of 2
}

// The contention term: with more ranks than processors, every message's hand-off (a
// wake-up included) and every byte share the processors, so an algorithm is ranked by
// its messages in all: at 4 ranks on 2 processors the tree's 6 beat rd's 8, rhd's 16 and
// the ring's 24 (measured on such a host: docs/PERFORMANCE.md, "Message algorithms"),
// until rd's bytes (the whole message per exchange) outweigh its messages.
TEST(CostModel, ContentionRanksByMessagesInAll) {
  const CostParams two = tcp_host(2), four = tcp_host(4);
  auto t = [&](const CostParams& p, const char* a, std::size_t b) {
    return predict_us(p, CollKind::kAllReduce, a, b, 4, kTcp);
  };
  for (std::size_t b : {std::size_t(8), std::size_t(64) << 10, std::size_t(512) << 10}) {
    EXPECT_LT(t(two, "tree", b), t(two, "rd", b)) << b;
    if (b <= (64 << 10)) {  // then rd's bytes
      EXPECT_LT(t(two, "rd", b), t(two, "rhd", b)) << b;
    }
    EXPECT_LT(t(two, "rhd", b), t(two, "ring", b)) << b;
    EXPECT_GT(t(two, "ring", b), 1.5 * t(four, "ring", b)) << b;
  }
  // A processor per rank: no contention, the path decides (rd's two exchanges first).
  EXPECT_LT(t(four, "rd", 8), t(four, "tree", 8));
}

}  // namespace
}  // namespace chorus::algo
