// Observer: what watches a communicator's operations when asked to — the timeline
// (CHORUS_TIMELINE), the statistics (CHORUS_STATS / Options::stats) and a user's
// chorus::Profiler. CommImpl holds none when nothing watches (one null check per
// operation); otherwise it calls start()/end() around each operation's execution.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bootstrap/store.h"
#include "chorus/profiler.h"
#include "core/issued_op.h"
#include "diag/op_stats.h"

namespace chorus::core {

struct ObserverSettings {
  std::uint32_t comm_id = 0;
  std::string comm_key;   // identical on every member rank ("comm0", "chorus/comm0/split1/c0/comm0")
  int rank = 0;
  int size = 1;
  bool timeline = false;  // the process timeline is open for this communicator
  bool stats = false;
  bool print_stats = false;  // gather and print the table at destruction (CHORUS_STATS=1)
};

class Observer {
 public:
  explicit Observer(ObserverSettings s);
  ~Observer();  // releases the timeline

  void set_profiler(std::shared_ptr<Profiler> p) { profiler_ = std::move(p); }
  void enable_stats();
  bool needed() const { return settings_.timeline || stats_ || profiler_; }

  // The timeline and a Profiler want a hierarchical algorithm's levels: the op's
  // args then carry a LevelLog (CollArgs::levels) while it runs; the statistics do not.
  bool wants_levels() const { return settings_.timeline || profiler_ != nullptr; }
  // Around the execution of `op` (any thread): start() stamps op.start_ns; end() passes
  // the levels in op.args.levels on (timeline child spans, OpEvent::levels).
  void start(IssuedOp& op);
  void end(const IssuedOp& op, bool ok);

  std::vector<OpStatsRow> stats() const;
  // With print_stats: publishes this rank's rows under "stats/<rank>" of `store`; rank 0
  // gathers every rank's (bounded by `budget`) and writes the table (stderr or
  // CHORUS_DEBUG_FILE).
  void finish(bootstrap::Store& store, std::chrono::milliseconds budget);

 private:
  OpEvent event_of(const IssuedOp& op) const;

  ObserverSettings settings_;
  std::unique_ptr<diag::OpStats> stats_;
  std::shared_ptr<Profiler> profiler_;
};

}  // namespace chorus::core
