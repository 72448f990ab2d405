// Timing and checking of one row; cross-rank max/sum use the library's own all_reduce.
#include "runner.h"

#include <algorithm>
#include <chrono>

#include "check_values.h"

namespace chorus_bench {

namespace {
constexpr int kSettleIters = 12;  // the agreement lands 4 collectives after it is proposed
}  // namespace

Runner::Runner(chorus::Communicator& comm, const BenchConfig& cfg)
    : comm_(comm), cfg_(cfg), a_(cfg.registered), b_(cfg.registered) {}

std::optional<RowResult> Runner::run_row(Coll c, std::size_t bytes) {
  std::size_t es = chorus::dtype_size(cfg_.dtype);
  Shape shape = shape_for(c, bytes, es, comm_.size());
  if (shape.count == 0) return std::nullopt;
  std::size_t need = std::max(shape.in_elems, shape.out_elems) * es;
  a_.ensure(need);
  b_.ensure(need);
  RowResult row{c, shape.elems * es, shape.elems, cfg_.dtype, cfg_.op, cfg_.root, {}, {}};
  row.out_of_place = run_mode(c, shape, false);
  row.in_place = run_mode(c, shape, true);
  return row;
}

ModeResult Runner::run_mode(Coll c, const Shape& shape, bool in_place) {
  std::size_t es = chorus::dtype_size(cfg_.dtype);
  Layout l = layout_for(c, in_place, shape, es, comm_.rank(), a_.data(), b_.data());
  CheckSpec spec{c, cfg_.dtype, cfg_.op, comm_.rank(), comm_.size(), cfg_.root, shape};
  auto run_once = [&] { invoke(comm_, c, l, shape.count, cfg_.dtype, cfg_.op, cfg_.root); };

  fill_buffers(spec, l, b_.data());
  comm_.barrier();
  // With registered buffers the ranks agree within a few collectives that every rank's
  // are (docs/ALGORITHMS.md, "Placement"); until then the choice is the heap's. The first
  // row warms up past that, so its timed iterations run what every later row runs.
  const int warmup = cfg_.registered && first_mode_ ? std::max(cfg_.warmup_iters, kSettleIters)
                                                    : cfg_.warmup_iters;
  first_mode_ = false;
  for (int i = 0; i < warmup; ++i) run_once();
  comm_.barrier();
  const std::size_t bytes_reported = shape.elems * es;
  const auto before = cfg_.stats ? stats_row(c, bytes_reported) : std::pair<std::uint64_t, double>{};
  using Clock = std::chrono::steady_clock;
  double fastest = 0, slowest = 0, total = 0;
  auto last = Clock::now();
  for (int i = 0; i < cfg_.iters; ++i) {
    if (cfg_.sync) {
      comm_.barrier();
      last = Clock::now();
    }
    run_once();
    const auto now = Clock::now();
    double us = std::chrono::duration<double, std::micro>(now - last).count();
    if (cfg_.sync) us = max_over_ranks(us);  // the operation ends with its last rank
    fastest = i == 0 ? us : std::min(fastest, us);
    slowest = std::max(slowest, us);
    total += us;
    last = now;
  }

  ModeResult r;
  if (cfg_.stats) {
    const auto after = stats_row(c, bytes_reported);
    const std::uint64_t n = after.first - before.first;
    r.stats_time_us = max_over_ranks(n > 0 ? (after.second - before.second) / n : -1.0);
  }
  r.time_us = max_over_ranks(total / cfg_.iters);
  r.min_us = max_over_ranks(fastest);
  r.max_us = max_over_ranks(slowest);
  double bytes = static_cast<double>(shape.elems * es);
  r.algbw = r.time_us > 0 ? bytes / (r.time_us * 1e3) : 0;  // bytes/us/1e3 = GB/s
  r.busbw = r.algbw * busbw_factor(c, comm_.size());
  if (cfg_.check) {
    fill_buffers(spec, l, b_.data());
    run_once();
    r.wrong = sum_over_ranks(count_wrong(spec, l));
  }
  return r;
}

std::pair<std::uint64_t, double> Runner::stats_row(Coll c, std::size_t bytes) const {
  std::size_t cls = 1;
  while (cls <= bytes / 2) cls <<= 1;
  for (const chorus::OpStatsRow& row : comm_.stats())
    if (row.op == coll_name(c) && row.size_class == (bytes == 0 ? 0 : cls))
      return {row.count, row.total_us};
  return {0, 0.0};
}

double Runner::max_over_ranks(double value) {
  double out = 0;
  comm_.all_reduce(&value, &out, 1, chorus::DataType::kFloat64, chorus::ReduceOp::kMax);
  return out;
}

std::int64_t Runner::sum_over_ranks(std::int64_t value) {
  std::int64_t out = 0;
  comm_.all_reduce(&value, &out, 1, chorus::DataType::kInt64, chorus::ReduceOp::kSum);
  return out;
}

}  // namespace chorus_bench
