// torch.profiler ranges around backend operations (see profiling.h).
#include "profiling.h"

#include <ATen/record_function.h>

#include <mutex>
#include <string>

namespace chorus::torch_backend {

struct OpRange::State {
  std::mutex mu;
  std::unique_ptr<at::RecordFunction> rf;
};

std::shared_ptr<OpRange> OpRange::begin(c10d::OpType type) {
  auto rf = std::make_unique<at::RecordFunction>(at::RecordScope::USER_SCOPE);
  if (!rf->isActive()) return nullptr;
  std::string name = "chorus:" + c10d::opTypeToString(type);
  for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  rf->before(std::move(name));
  rf->_setAsync();
  auto range = std::make_shared<OpRange>();
  range->state_ = std::make_unique<State>();
  range->state_->rf = std::move(rf);
  return range;
}

void OpRange::end() {
  if (!state_) return;
  std::lock_guard<std::mutex> g(state_->mu);
  if (state_->rf) {
    state_->rf->end();
    state_->rf.reset();
  }
}

OpRange::~OpRange() { end(); }

}  // namespace chorus::torch_backend
