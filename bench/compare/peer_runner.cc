// Timing loop of the peer benchmarks (chorus-bench's: barrier, warm-up, barrier, timed
// iterations, slowest rank's mean), then one checked call; rank 0 prints and writes JSON.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "peer_bench.h"
#include "peer_check.h"

namespace compare {
namespace {

struct Row {
  Op op;
  std::size_t bytes, count;
  double time_us, min_us, max_us, algbw, busbw;  // mean, fastest and slowest iteration
  std::int64_t wrong;  // -1 when not checked
};

Row run_row(Peer& peer, const Config& cfg, Op op, const Shape& shape, std::vector<float>& a,
            std::vector<float>& b) {
  std::size_t need = std::max(shape.in_elems, shape.out_elems);
  if (a.size() < need) a.resize(need), b.resize(need);
  int r = peer.rank(), n = peer.size();
  fill_buffers(op, shape, r, n, cfg.root, a.data(), b.data());
  peer.prepare(op, shape, a.data(), b.data());
  peer.barrier();
  for (int i = 0; i < cfg.warmup_iters; ++i) peer.run(op, shape, a.data(), b.data());
  peer.barrier();
  // As chorus-bench: back to back, each interval one iteration; with --sync a barrier
  // first and the iteration's time is its slowest rank's.
  using Clock = std::chrono::steady_clock;
  double fastest = 0, slowest = 0, total = 0;
  auto last = Clock::now();
  for (int i = 0; i < cfg.iters; ++i) {
    if (cfg.sync) {
      peer.barrier();
      last = Clock::now();
    }
    peer.run(op, shape, a.data(), b.data());
    const auto now = Clock::now();
    double us = std::chrono::duration<double, std::micro>(now - last).count();
    if (cfg.sync) us = peer.max_over_ranks(us);
    fastest = i == 0 ? us : std::min(fastest, us);
    slowest = std::max(slowest, us);
    total += us;
    last = now;
  }

  Row row{op, shape.elems * sizeof(float), shape.elems, 0, 0, 0, 0, 0, -1};
  row.time_us = peer.max_over_ranks(total / cfg.iters);
  row.min_us = peer.max_over_ranks(fastest);
  row.max_us = peer.max_over_ranks(slowest);
  row.algbw = row.time_us > 0 ? static_cast<double>(row.bytes) / (row.time_us * 1e3) : 0;
  row.busbw = row.algbw * busbw_factor(op, n);
  if (cfg.check) {
    fill_buffers(op, shape, r, n, cfg.root, a.data(), b.data());
    peer.barrier();
    peer.run(op, shape, a.data(), b.data());
    const float* out = peer.result(op, a.data(), b.data());
    row.wrong = peer.sum_over_ranks(count_wrong(op, shape, r, n, cfg.root, out));
  }
  return row;
}

void print_row(const Row& row) {
  std::printf("  %10zu  %12zu  %14s  %10.2f  %7.3f  %7.3f  %6lld\n", row.bytes, row.count,
              op_name(row.op), row.time_us, row.algbw, row.busbw,
              static_cast<long long>(row.wrong));
  std::fflush(stdout);
}

// JSON array with chorus-bench's field names (out-of-place only: ip_* are null).
bool write_json(const std::string& path, const char* system, const std::vector<Row>& rows,
                int nranks, int root) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return false;
  std::fprintf(f, "[\n");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    bool redop = r.op == Op::kAllReduce || r.op == Op::kReduceScatter;
    std::string root_text = r.op == Op::kBroadcast ? std::to_string(root) : "null";
    std::string wrong_text = r.wrong < 0 ? "null" : std::to_string(r.wrong);
    std::fprintf(f,
                 "  {\"system\": \"%s\", \"op\": \"%s\", \"nranks\": %d, \"size\": %zu, "
                 "\"count\": %zu, \"type\": \"float32\", \"redop\": %s, \"root\": %s, "
                 "\"oop_time_us\": %.3f, \"oop_min_us\": %.3f, \"oop_max_us\": %.3f, "
                 "\"oop_algbw\": %.6f, \"oop_busbw\": %.6f, "
                 "\"oop_wrong\": %s, \"ip_time_us\": null, \"ip_algbw\": null, "
                 "\"ip_busbw\": null, \"ip_wrong\": null}%s\n",
                 system, op_name(r.op), nranks, r.bytes, r.count, redop ? "\"sum\"" : "null",
                 root_text.c_str(), r.time_us, r.min_us, r.max_us, r.algbw, r.busbw,
                 wrong_text.c_str(), i + 1 < rows.size() ? "," : "");
  }
  std::fprintf(f, "]\n");
  return std::fclose(f) == 0;
}

}  // namespace

int run_bench(Peer& peer, const Config& cfg) {
  bool print = peer.rank() == 0;
  if (cfg.root >= peer.size()) {
    if (print) std::fprintf(stderr, "%s: --root %d is not a rank\n", peer.name(), cfg.root);
    return 2;
  }
  if (print)
    std::printf("# %s: %d ranks, float32 sum, %d warm-up + %d timed iterations, check %d\n"
                "# %10s  %12s  %14s  %10s  %7s  %7s  %6s\n",
                peer.name(), peer.size(), cfg.warmup_iters, cfg.iters, cfg.check ? 1 : 0,
                "size(B)", "count", "op", "time(us)", "algbw", "busbw", "#wrong");
  std::vector<Row> rows;
  std::vector<float> a, b;
  std::int64_t wrong = 0;
  for (Op op : cfg.ops) {
    for (std::size_t bytes = cfg.min_bytes; bytes <= cfg.max_bytes;) {
      Shape shape = shape_for(op, bytes, peer.size());
      if (shape.count > 0) {
        rows.push_back(run_row(peer, cfg, op, shape, a, b));
        if (rows.back().wrong > 0) wrong += rows.back().wrong;
        if (print) print_row(rows.back());
      }
      if (bytes > cfg.max_bytes / cfg.step_factor) break;
      bytes *= cfg.step_factor;
    }
  }
  if (print) std::printf("# wrong values: %lld %s\n", static_cast<long long>(wrong),
                         wrong == 0 ? "OK" : "FAILED");
  if (print && !cfg.json_path.empty() &&
      !write_json(cfg.json_path, peer.name(), rows, peer.size(), cfg.root)) {
    std::fprintf(stderr, "%s: cannot write %s\n", peer.name(), cfg.json_path.c_str());
    wrong = wrong > 0 ? wrong : 1;
  }
  peer.barrier();
  return wrong > 0 ? 1 : 0;
}

}  // namespace compare
