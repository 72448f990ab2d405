// The one way to make a chorus::Work around an operation's core::WorkState: Work's
// constructor from a state is private, with this class as its friend, so users cannot call it.
#pragma once
#include <memory>
#include <utility>

#include "chorus/work.h"
#include "core/work_state.h"

namespace chorus::api {

class WorkAccess {
 public:
  static Work make(std::shared_ptr<core::WorkState> state) { return Work(std::move(state)); }
};

}  // namespace chorus::api
