// ChorusWork, the Graveyard, drain() and failure_text() (see work.h), and
// ProcessGroupChorus::launch(), which issues an operation and wires its completion to them.
#include "work.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/ivalue.h>

#include <condition_variable>
#include <stdexcept>

#include "process_group.h"
#include "profiling.h"

namespace chorus::torch_backend {

// --- Operations in flight (drain) -----------------------------------------------------

namespace {
std::mutex g_pending_mu;
std::condition_variable g_pending_cv;
std::int64_t g_pending = 0;

void pending_add() {
  std::lock_guard<std::mutex> lock(g_pending_mu);
  ++g_pending;
}

void pending_done() {
  std::lock_guard<std::mutex> lock(g_pending_mu);
  if (--g_pending == 0) g_pending_cv.notify_all();
}
}  // namespace

bool drain(std::chrono::milliseconds timeout) {
  bool drained = false;
  {
    std::unique_lock<std::mutex> lock(g_pending_mu);
    drained = g_pending_cv.wait_for(lock, timeout, [] { return g_pending == 0; });
  }
  Graveyard::instance().clear();
  return drained;
}

// --- Graveyard ------------------------------------------------------------------------

Graveyard& Graveyard::instance() {
  static Graveyard* const graveyard = new Graveyard();  // never destroyed (see work.h)
  return *graveyard;
}

void Graveyard::bury(std::shared_ptr<WorkState> state) {
  std::lock_guard<std::mutex> lock(mu_);
  buried_.push_back(std::move(state));
}

void Graveyard::clear() {
  std::vector<std::shared_ptr<WorkState>> dead;
  {
    std::lock_guard<std::mutex> lock(mu_);
    dead.swap(buried_);
  }
}  // `dead` released here, outside the lock

std::string failure_text(const std::string& op, chorus::ErrorCode code, const std::string& message) {
  if (code == chorus::ErrorCode::kTimeout)
    return op + " failed with a timeout (" + chorus::to_string(code) + "): " + message;
  return op + " failed: " + chorus::to_string(code) + ": " + message;
}

// --- ChorusWork -----------------------------------------------------------------------

ChorusWork::ChorusWork(int rank, c10d::OpType type, chorus::Work work,
                       std::shared_ptr<WorkState> state)
    : c10d::Work(rank, type), work_(std::move(work)), state_(std::move(state)) {}

bool ChorusWork::isCompleted() {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->done;
}

bool ChorusWork::isSuccess() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->done && !state_->error;
}

std::exception_ptr ChorusWork::exception() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->error;
}

std::vector<at::Tensor> ChorusWork::result() { return state_->outputs; }

bool ChorusWork::wait(std::chrono::milliseconds timeout) {
  // Torch's binding releases the GIL around wait().
  try {
    if (timeout == ::kNoTimeout) {
      work_.wait();
    } else if (!work_.wait(timeout)) {
      TORCH_CHECK(false, "chorus backend: ", work_.op(), " (seq ", work_.seq(),
                  ") still running when wait() reached its timeout of ", timeout.count(), " ms");
    }
  } catch (const chorus::Error& e) {
    TORCH_CHECK(false, "chorus backend: ", failure_text(work_.op(), e.code(), e.message()));
  }
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (state_->error) std::rethrow_exception(state_->error);
  }
  // The Future completes on torch's inter-op pool right after: once wait() returns, so
  // has it (users read work.get_future().value() after wait()).
  state_->future->wait();
  return true;
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::launch(
    c10d::OpType type, std::vector<at::Tensor> outputs, std::vector<at::Tensor> keepalive,
    const std::function<chorus::Work()>& issue, std::function<void()> finish) {
  auto state = std::make_shared<WorkState>();
  state->outputs = std::move(outputs);
  state->keepalive = std::move(keepalive);
  state->finish = std::move(finish);
  state->future = c10::make_intrusive<c10::ivalue::Future>(
      c10::ListType::create(c10::TensorType::get()));
  Graveyard::instance().clear();  // earlier operations' tensors, released on this thread
  std::shared_ptr<OpRange> range = OpRange::begin(type);  // torch.profiler: "chorus:<op>"
  chorus::Work work;
  {
    std::lock_guard<std::mutex> lock(issue_mu_);
    try {
      work = issue();
      issued_.fetch_add(1, std::memory_order_relaxed);
    } catch (const chorus::Error& e) {
      TORCH_CHECK(false, "chorus backend: ", e.what());
    }
  }
  pending_add();  // until the Future's callbacks have run (drain)
  auto result = c10::make_intrusive<ChorusWork>(rank_, type, work, state);
  // The background threads hold the state through a slot they empty when done with it,
  // then bury it (see Graveyard): they never release tensors themselves.
  struct Slot {
    std::shared_ptr<WorkState> state;
  };
  auto slot = std::make_shared<Slot>(Slot{state});
  state.reset();
  work.on_complete([slot, range](const chorus::Work& done) {
    if (range) range->end();
    std::shared_ptr<WorkState> state = std::move(slot->state);
    if (!state) return;
    std::exception_ptr error;
    if (done.state() == chorus::Work::State::kFailed) {
      error = std::make_exception_ptr(std::runtime_error(
          "chorus backend: " + failure_text(done.op(), done.code(), done.message())));
    } else if (state->finish) {
      try {
        state->finish();
      } catch (...) {
        error = std::current_exception();
      }
    }
    {
      std::lock_guard<std::mutex> lock(state->mu);
      state->done = true;
      state->error = error;
      // keepalive and finish stay until the state is released on a caller's thread.
    }
    // The Future's callbacks (DDP comm hooks) may issue new operations, which Chorus
    // forbids on its completing thread: complete it on torch's inter-op pool instead.
    slot->state = std::move(state);
    at::launch([slot, error] {
      std::shared_ptr<WorkState> state = std::move(slot->state);
      if (error) {
        state->future->setError(error);
      } else {
        state->future->markCompleted(c10::IValue(state->outputs));
      }
      Graveyard::instance().bury(std::move(state));
      pending_done();
    });
  });
  return result;
}

}  // namespace chorus::torch_backend
