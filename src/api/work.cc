// chorus::Work: the public handle over core::WorkState.
#include "chorus/work.h"

#include "api/error.h"
#include "core/work_state.h"
#include "diag/log.h"
#include "util/strings.h"

namespace chorus {

namespace {

void throw_if_failed(const core::WorkState& s) {
  if (s.state() == core::WorkState::State::kFailed) api::throw_if_error(s.status());
}

}  // namespace

Work::Work() = default;

Work::Work(std::shared_ptr<core::WorkState> state) : state_(std::move(state)) {}

bool Work::test() const noexcept { return !state_ || state_->is_complete(); }

namespace {
// Waiting on this thread for an operation of its own open group would never return.
void refuse_deferred(const core::WorkState& st) {
  if (st.waiting_would_hang())
    throw Error(ErrorCode::kInvalidArgument,
                str_printf("wait() on %s seq %lld, issued in a group that has not ended: "
                           "it runs at group_end(); call that first",
                           st.name(), static_cast<long long>(st.seq())));
}
}  // namespace

void Work::wait() const {
  if (!state_) return;
  refuse_deferred(*state_);
  state_->wait();
  throw_if_failed(*state_);
}

bool Work::wait(std::chrono::milliseconds timeout) const {
  if (timeout.count() < 0)
    throw Error(ErrorCode::kInvalidArgument,
                str_printf("timeout must be >= 0 ms, got %lld",
                           static_cast<long long>(timeout.count())));
  if (!state_) return true;
  refuse_deferred(*state_);
  if (!state_->wait_until(std::chrono::steady_clock::now() + timeout)) return false;
  throw_if_failed(*state_);
  return true;
}

Work::State Work::state() const noexcept {
  if (!state_) return State::kDone;
  switch (state_->state()) {
    case core::WorkState::State::kPending: return State::kPending;
    case core::WorkState::State::kDone: return State::kDone;
    case core::WorkState::State::kFailed: return State::kFailed;
  }
  return State::kFailed;
}

ErrorCode Work::code() const noexcept { return state_ ? state_->status().code() : ErrorCode::kOk; }

std::string Work::message() const { return state_ ? state_->status().message() : std::string(); }

void Work::on_complete(std::function<void(const Work&)> callback) const {
  if (!callback) return;
  if (!state_) {
    try {
      callback(*this);
    } catch (...) {
      CHORUS_LOG(WARN, Coll, "a Work::on_complete callback threw; ignored");
    }
    return;
  }
  state_->on_complete([cb = std::move(callback)](const std::shared_ptr<core::WorkState>& s) {
    try {
      cb(Work(s));
    } catch (const std::exception& e) {
      CHORUS_LOG(WARN, Coll, "a Work::on_complete callback of %s seq %lld threw: %s; ignored",
                 s->name(), static_cast<long long>(s->seq()), e.what());
    } catch (...) {
      CHORUS_LOG(WARN, Coll, "a Work::on_complete callback of %s seq %lld threw; ignored",
                 s->name(), static_cast<long long>(s->seq()));
    }
  });
}

std::int64_t Work::seq() const noexcept { return state_ ? state_->seq() : -1; }

int Work::source() const noexcept { return state_ ? state_->source() : -1; }

std::string Work::op() const { return state_ ? state_->name() : std::string(); }

}  // namespace chorus
