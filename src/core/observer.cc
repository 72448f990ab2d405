// Observer: operation events to the timeline, the statistics and a Profiler.
#include "core/observer.h"

#include "core/comm_diag.h"
#include "diag/flight_recorder.h"
#include "diag/timeline.h"
#include "util/strings.h"

namespace chorus::core {

namespace {

// The nccl-tests size: the whole buffer for collectives that split it in blocks per rank.
bool whole_buffer(op::CollKind k) {
  return k == op::CollKind::kAllGather || k == op::CollKind::kReduceScatter ||
         k == op::CollKind::kAllToAll || k == op::CollKind::kGather ||
         k == op::CollKind::kScatter;
}

}  // namespace

Observer::Observer(ObserverSettings s) : settings_(std::move(s)) {
  if (settings_.stats) enable_stats();
}

Observer::~Observer() {
  if (settings_.timeline) diag::Timeline::process().release();
}

void Observer::enable_stats() {
  if (!stats_) stats_ = std::make_unique<diag::OpStats>(settings_.size);
}

OpEvent Observer::event_of(const IssuedOp& op) const {
  OpEvent e;
  e.comm_id = settings_.comm_id;
  e.rank = settings_.rank;
  e.size = settings_.size;
  e.seq = op.seq();
  e.name = op.name;
  e.stream = op.stream;
  e.stream_name = op.stream_label;
  e.issue_ns = op.issue_ns;
  e.start_ns = op.start_ns;
  if (op.p2p) {
    e.bytes = op.bytes;
    e.count = op.bytes;
    e.peer = op.peer;
    e.algo = "p2p";
    return e;
  }
  const op::CollKind k = op.kind;
  e.algo = op.choice.name;
  if (k != op::CollKind::kBarrier) e.dtype = chorus::to_string(op.args.dtype);
  if (op::takes_reduce_op(k)) e.redop = chorus::to_string(op.args.op);
  if (op::takes_root(k)) e.root = op.args.root;
  e.count = op.args.count;
  e.bytes = op.args.count * dtype_size(op.args.dtype) *
            (whole_buffer(k) ? static_cast<std::size_t>(settings_.size) : 1);
  return e;
}

void Observer::start(IssuedOp& op) {
  op.start_ns = diag::steady_now_ns();
  if (profiler_) profiler_->on_start(event_of(op));
}

void Observer::end(const IssuedOp& op, bool ok) {
  OpEvent e = event_of(op);
  e.end_ns = diag::steady_now_ns();
  e.ok = ok;
  if (op.args.levels != nullptr) {
    e.levels = op.args.levels->data();
    e.num_levels = op.args.levels->size();
  }
  if (stats_) stats_->add(e);
  if (settings_.timeline) diag::Timeline::process().span(e);
  if (profiler_) profiler_->on_end(e);
}

std::vector<OpStatsRow> Observer::stats() const {
  return stats_ ? stats_->rows() : std::vector<OpStatsRow>{};
}

void Observer::finish(bootstrap::Store& store, std::chrono::milliseconds budget) {
  if (!settings_.print_stats || !stats_) return;
  const std::string mine = diag::encode_stats(stats_->rows());
  const std::string key = str_printf("stats/%d", settings_.rank);
  (void)store.set(key, bootstrap::Bytes(mine.begin(), mine.end()));
  if (settings_.rank != 0) return;
  const Deadline deadline = Deadline::after(budget);
  std::vector<std::vector<OpStatsRow>> per_rank(static_cast<std::size_t>(settings_.size));
  per_rank[0] = diag::decode_stats(mine);
  for (int r = 1; r < settings_.size; ++r) {
    Result<bootstrap::Bytes> raw = store.get(str_printf("stats/%d", r), deadline);
    if (raw) per_rank[static_cast<std::size_t>(r)] =
                 diag::decode_stats(std::string(raw->begin(), raw->end()));
  }
  write_report(diag::format_stats_table(settings_.comm_key, settings_.size, per_rank));
}

}  // namespace chorus::core
