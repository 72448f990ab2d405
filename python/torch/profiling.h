// torch.profiler ranges for the backend's operations: each one appears in torch's own
// traces as "chorus:<op>" (e.g. "chorus:allreduce"), begun on the issuing thread and
// ended when Chorus completes it (torch's asynchronous RecordFunction, as c10d's own
// Work does: torch 1.13's profiler callbacks are registered on the profiling thread, so
// ranges must begin there, not on Chorus's stream workers).
#pragma once
#include <memory>

#include <torch/csrc/distributed/c10d/Work.hpp>

namespace chorus::torch_backend {

class OpRange {
 public:
  // A begun range, or nullptr when no profiler is recording (cost: one check).
  static std::shared_ptr<OpRange> begin(c10d::OpType type);
  ~OpRange();  // ends the range if end() was not called
  void end();  // thread-safe to call from the completing thread; once

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace chorus::torch_backend
