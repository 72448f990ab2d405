// chorus-stress: a long, dense, mixed collective load with every result checked. Ranks
// stop together (Communicator::agree at each step boundary) unless told to reproduce
// the naive per-rank deadline. Exit status: 0 when every step of every rank was right
// and nothing failed, 1 on wrong results or errors, 2 on usage errors.
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "chorus/communicator.h"
#include "report.h"
#include "stress.h"
#include "stress_config.h"

namespace {

using chorus_stress::Injection;
using chorus_stress::StressConfig;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

const char* pattern_name(const StressConfig& cfg) {
  switch (cfg.pattern) {
    case chorus_stress::Pattern::k5d: return "5d";
    case chorus_stress::Pattern::kRandom: return "random";
    case chorus_stress::Pattern::kSingle: return chorus_stress::kind_name(cfg.single);
  }
  return "?";
}

// Carries out the faults injected for this rank at this step. Returns true when this
// rank must issue a different collective (desync); does not return for kill and stall;
// sets `exit_now` for exit.
bool inject(const StressConfig& cfg, int rank, std::int64_t step, bool* exit_now) {
  bool desync = false;
  for (const Injection& inj : cfg.injections) {
    if (inj.rank != rank || inj.step != step) continue;
    std::fprintf(stderr, "chorus-stress: rank %d: injecting %s at step %lld\n", rank,
                 inj.what == Injection::What::kExit   ? "exit"
                 : inj.what == Injection::What::kKill ? "kill"
                 : inj.what == Injection::What::kStall ? "stall" : "desync",
                 static_cast<long long>(step));
    std::fflush(stderr);
    switch (inj.what) {
      case Injection::What::kExit: *exit_now = true; break;
      case Injection::What::kKill: std::raise(SIGKILL); break;
      case Injection::What::kStall:
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
      case Injection::What::kDesync: desync = true; break;
    }
  }
  return desync;
}

int stress(const StressConfig& cfg) {
  chorus::Options options;
  if (cfg.timeout.count() > 0) options.timeout = cfg.timeout;  // else CHORUS_TIMEOUT
  if (cfg.stats) options.stats = true;                           // else CHORUS_STATS
  chorus::Communicator world = chorus::Communicator::init_from_env(options);
  const int rank = world.rank();
  const bool print = rank == 0;
  std::unique_ptr<chorus_stress::Stress> engine;
  try {
    engine = std::make_unique<chorus_stress::Stress>(world, cfg);
  } catch (const std::invalid_argument& e) {
    if (print) std::fprintf(stderr, "chorus-stress: %s\n", e.what());
    return 2;
  }
  if (print) {
    std::printf("# chorus-stress: pattern %s, %d ranks, %zu bytes per op, %s, %s\n",
                pattern_name(cfg), world.size(), cfg.size_bytes,
                cfg.serial ? "serial" : "one stream per dimension", engine->describe().c_str());
    std::fflush(stdout);
  }
  chorus_stress::Report report;
  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline = start + cfg.duration;
  const Clock::time_point local_deadline = deadline + cfg.deadline_skew * rank;
  Clock::time_point next_log = start + cfg.log_interval;
  std::int64_t step = 0;
  for (;; ++step) {
    if (cfg.steps > 0 && step >= cfg.steps) break;
    if (cfg.duration.count() > 0) {
      if (cfg.unsafe_local_deadline) {
        if (Clock::now() >= local_deadline) break;  // the naive loop: no agreement
      } else if (world.agree(Clock::now() >= deadline)) {
        break;  // every rank gets the same answer, so every rank stops at this step
      }
    }
    for (const auto& d : cfg.delays)
      if (d.rank == rank) std::this_thread::sleep_for(d.delay);
    bool exit_now = false;
    const bool desync = inject(cfg, rank, step, &exit_now);
    if (exit_now) return 0;
    std::vector<chorus_stress::OpOutcome> outcomes;
    try {
      outcomes = engine->run_step(step, desync);
    } catch (const chorus::Error& e) {
      std::fprintf(stderr, "chorus-stress: rank %d failed in step %lld: %s\n", rank,
                   static_cast<long long>(step), e.what());
      return 1;
    }
    for (const auto& o : outcomes)
      if (o.wrong)
        std::fprintf(stderr, "chorus-stress: rank %d step %lld %s: %s\n", rank,
                     static_cast<long long>(step), o.label.c_str(), o.wrong->c_str());
    report.add(outcomes, engine->last_step_seconds());
    if (print && Clock::now() >= next_log) {
      std::printf("# %s\n", report.progress_line(seconds_since(start), step + 1).c_str());
      std::fflush(stdout);
      next_log += cfg.log_interval;
    }
  }
  const double elapsed = seconds_since(start);
  std::printf("chorus-stress: rank %d finished %lld steps\n", rank, static_cast<long long>(step));
  std::int64_t wrong = report.wrong();
  if (!cfg.unsafe_local_deadline)  // every rank is here at the same step: add up the errors
    world.all_reduce(&wrong, &wrong, 1, chorus::DataType::kInt64, chorus::ReduceOp::kSum);
  if (print) {
    std::printf("# %s\n%s# wrong results on all ranks: %lld\n",
                report.progress_line(elapsed, step).c_str(), report.summary_table().c_str(),
                static_cast<long long>(wrong));
    if (cfg.stats) std::printf("%s", engine->stats_text().c_str());
    if (!cfg.json_path.empty()) {
      std::ofstream out(cfg.json_path);
      out << report.summary_json(step, elapsed) << "\n";
      if (!out) {
        std::fprintf(stderr, "chorus-stress: cannot write %s\n", cfg.json_path.c_str());
        return 1;
      }
    }
  }
  std::fflush(stdout);
  return wrong > 0 || report.wrong() > 0 ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  StressConfig cfg;
  if (int rc = chorus_stress::parse_args(argc, argv, &cfg); rc >= 0) return rc;
  try {
    return stress(cfg);
  } catch (const chorus::Error& e) {
    std::fprintf(stderr, "chorus-stress: %s\n", e.what());
    return 1;
  }
}
