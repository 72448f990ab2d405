// Work: the handle of one asynchronous operation (Communicator::*_async, group calls).
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "chorus/export.h"
#include "chorus/status.h"

namespace chorus {

namespace core { class WorkState; }
namespace api { class WorkAccess; }

// A shared handle: copies refer to the same operation. The buffers given to the call
// that returned it must stay valid and untouched until the Work is complete (test()
// is true or wait() returned or threw): Chorus reads and writes them until then.
//
// A default-constructed Work is empty and already complete without error.
// Thread-safe: any thread may query or wait on any copy.
class CHORUS_EXPORT Work {
 public:
  enum class State { kPending, kDone, kFailed };

  Work();

  // True once the operation has finished, successfully or not, and the callbacks
  // registered before that have run. Never blocks or throws.
  bool test() const noexcept;
  // Blocks until test() is true (sleeping, not spinning); throws its chorus::Error if it
  // failed. Never call it for a Work of a group that is still open (before its
  // group_end()): nothing would complete it.
  void wait() const;
  // Like wait(), but returns false when the operation is still pending after `timeout`
  // (it keeps running; the communicator's own deadline still bounds it). Throws the
  // operation's error if it failed, kInvalidArgument for a negative timeout.
  bool wait(std::chrono::milliseconds timeout) const;

  State state() const noexcept;
  // The failure's code and message (as chorus::Error would carry them); kOk and "" while
  // pending or after success.
  ErrorCode code() const noexcept;
  std::string message() const;

  // Runs `callback` once the operation has finished (on the thread that completes it --
  // the stream's worker, or the thread in group_end() -- right after completion, before
  // wait() returns), or at once on this thread when it already has. Callbacks run in
  // registration order; one that throws is logged and ignored. A callback may query and
  // wait on its own Work but must not block on other operations of the same stream
  // (they run after it), nor issue operations or call synchronize().
  void on_complete(std::function<void(const Work&)> callback) const;

  // The operation's sequence number on its communicator (-1 for an empty Work) and its
  // name ("all_reduce", "send", "group", ...).
  std::int64_t seq() const noexcept;
  std::string op() const;
  // A receive from any source (Communicator::recv_any_async): the rank it receives from,
  // known once the message has arrived (-1 before, and for every other operation). seq()
  // is then that pair's receive seq (-1 before).
  int source() const noexcept;

 private:
  // Only the library makes non-empty Works (through api::WorkAccess, src/api/work_access.h).
  friend class api::WorkAccess;
  explicit Work(std::shared_ptr<core::WorkState> state);

  std::shared_ptr<core::WorkState> state_;
};

}  // namespace chorus
