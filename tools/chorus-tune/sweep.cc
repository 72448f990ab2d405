// The sweep (sweep.h). One communicator per (collective, algorithm), created on first
// use with that algorithm forced. Calls run back to back, as in a training loop or
// chorus-bench; each is timed, and a rank's time of an algorithm is the median over the
// rounds of the round's mean per call (per_call.h). A cell's time of an algorithm is the
// slowest rank's (the maximum over ranks taken with an all_reduce on the default
// communicator).
//
// Why means of back-to-back calls, not single calls: a call's own duration is not what a
// loop of them costs when an algorithm lets a rank run ahead. The tree's root returns
// once its messages are queued, so most of its calls are short and a few wait for ring
// space: the median single call of the tree broadcast at 4 ranks, 32 KiB, was 5-7 us
// where back to back it took 27-37 us per call ("Session 15" of docs/PERFORMANCE.md).
// Why a whole round, not the median batch of 5 calls (sessions 15-17): the tree at 4
// ranks on 2 processors also stalls now and then for hundreds of microseconds (a rank
// that slept, scheduled late); the median batch left the stalls out (reduce of 32 KiB:
// 5.6-7.7 us) where a loop pays them (chorus-bench's mean of 200 calls: 45-60 us; the
// windows' 10-11 either way; "Session 18"). The median over rounds still drops a round
// in which a rank was descheduled.
#include "sweep.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "per_call.h"
#include "collective.h"

namespace chorus_tune {

using chorus_bench::Coll;

double Cell::loss(const std::string& algo) const {
  for (const AlgoTime& t : times)
    if (t.algo == algo && best_us > 0) return (t.us / best_us - 1) * 100;
  return -1;
}

namespace {

double max_over_ranks(chorus::Communicator& comm, double v) {
  double out = 0;
  comm.all_reduce(&v, &out, 1, chorus::DataType::kFloat64, chorus::ReduceOp::kMax);
  return out;
}

// Fewer timed calls for large messages: about iters MiB per algorithm and round at most.
int iters_for(const TuneConfig& cfg, std::size_t bytes) {
  const double scaled = double(cfg.iters) * (1 << 20) / std::max<std::size_t>(bytes, 1);
  return std::clamp(static_cast<int>(scaled), std::min(2, cfg.iters), cfg.iters);
}

}  // namespace

std::vector<Cell> sweep(chorus::Communicator& comm, const TuneConfig& cfg) {
  std::map<std::string, chorus::Communicator> forced;  // "op:algo"
  std::vector<std::byte> a, b;
  std::vector<Cell> cells;
  const chorus::DataType dt = chorus::DataType::kFloat32;
  const std::size_t es = chorus::dtype_size(dt);
  for (Coll c : cfg.colls) {
    for (std::size_t size = cfg.min_bytes; size <= cfg.max_bytes;) {
      const chorus_bench::Shape shape = chorus_bench::shape_for(c, size, es, comm.size());
      if (shape.count > 0) {
        Cell cell;
        cell.op = chorus_bench::coll_name(c);
        cell.ranks = comm.size();
        cell.bytes = shape.elems * es;
        cell.sel_bytes = shape.count * es;
        const chorus::Estimate e = comm.estimate(cell.op, shape.count, dt);
        cell.chosen = e.algo;
        cell.source = e.source;
        cell.rule_algo = e.rule_algo;
        cell.model_algo = e.model_algo;
        const std::size_t need = std::max(shape.in_elems, shape.out_elems) * es;
        if (a.size() < need) a.resize(need);
        if (b.size() < need) b.resize(need);
        // Out of place, except broadcast: in place, one buffer per rank, as MPI_Bcast and
        // torch.distributed.broadcast run it (and the model prices it).
        const chorus_bench::Layout l = chorus_bench::layout_for(
            c, c == Coll::kBroadcast, shape, es, comm.rank(), a.data(), b.data());
        for (const auto& [name, predicted] : e.candidates) {
          cell.times.push_back({name, std::numeric_limits<double>::infinity(), predicted});
          const std::string key = cell.op + ":" + name;
          if (!forced.count(key)) {
            chorus::Options o;
            o.algo = key;
            forced.emplace(key, chorus::Communicator::init_from_env(o));
          }
        }
        const int iters = iters_for(cfg, cell.bytes);
        // samples[j][round]: algorithm j's calls of that round, in order.
        std::vector<std::vector<std::vector<double>>> samples(cell.times.size());
        for (int round = 0; round < cfg.rounds; ++round) {
          for (std::size_t j = 0; j < cell.times.size(); ++j) {
            chorus::Communicator& k = forced.at(cell.op + ":" + cell.times[j].algo);
            auto once = [&] {
              chorus_bench::invoke(k, c, l, shape.count, dt, chorus::ReduceOp::kSum, 0);
            };
            for (int i = 0; i < cfg.warmup_iters; ++i) once();
            k.barrier();
            std::vector<double> calls;
            for (int i = 0; i < iters; ++i) {
              const auto t0 = std::chrono::steady_clock::now();
              once();
              calls.push_back(
                  std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                      .count());
            }
            samples[j].push_back(std::move(calls));
          }
        }
        // The median round of this rank (robust to a rank descheduled now and then on a
        // busy host), then the slowest rank.
        for (std::size_t j = 0; j < cell.times.size(); ++j)
          cell.times[j].us = max_over_ranks(comm, time_per_call(samples[j]));
        cell.best_us = std::numeric_limits<double>::infinity();
        for (const AlgoTime& t : cell.times)
          if (t.us < cell.best_us) {
            cell.best_us = t.us;
            cell.best = t.algo;
          }
        cells.push_back(std::move(cell));
      }
      if (size > cfg.max_bytes / cfg.step_factor) break;
      size = std::max(size * cfg.step_factor, size + 1);
    }
  }
  for (auto& [key, k] : forced) k.barrier();  // no rank tears down while another runs
  return cells;
}

}  // namespace chorus_tune
