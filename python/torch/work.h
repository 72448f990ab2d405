// The torch side of an operation in flight: ChorusWork (torch's c10d::Work over a
// chorus::Work), the state its completion callback holds, the Graveyard where background
// threads leave that state, drain() at exit, and the text of a failure.
#pragma once
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "chorus/status.h"
#include "chorus/work.h"

namespace chorus::torch_backend {

// What a completion callback needs (held by the callback, never holding the chorus::Work,
// so there is no reference cycle): tensors kept alive until done, the Future, the copy
// step run after the transfer (gathering into lists), the error.
struct WorkState {
  std::vector<at::Tensor> outputs;    // the Future's value and Work.result()
  std::vector<at::Tensor> keepalive;  // buffers Chorus reads or writes until done
  std::function<void()> finish;       // runs on success before the Future completes
  c10::intrusive_ptr<c10::ivalue::Future> future;
  std::mutex mu;
  bool done = false;
  std::exception_ptr error;
};

// Where background threads (Chorus's completing thread, torch's inter-op pool) leave the
// WorkStates they are done with, so that their tensors are released on a caller's thread
// (the next operation's issuing thread, a group's destruction, drain() at exit). Releasing
// a tensor whose Python object is owned by C++ takes the GIL, and a background thread
// taking the GIL while the interpreter finalizes is killed by Python (pthread_exit ->
// std::terminate). One per process and never destroyed: a graveyard owned by a group
// outlived it in the background thread's last reference when the group was destroyed
// before that thread buried its state, and that thread then released the tensors itself.
class Graveyard {
 public:
  static Graveyard& instance();
  void bury(std::shared_ptr<WorkState> state);
  void clear();  // releases what was buried, on the calling thread

 private:
  Graveyard() = default;
  std::mutex mu_;
  std::vector<std::shared_ptr<WorkState>> buried_;
};

class ChorusWork : public c10d::Work {
 public:
  ChorusWork(int rank, c10d::OpType type, chorus::Work work, std::shared_ptr<WorkState> state);
  bool isCompleted() override;
  bool isSuccess() const override;
  std::exception_ptr exception() const override;
  std::vector<at::Tensor> result() override;
  bool wait(std::chrono::milliseconds timeout = kNoTimeout) override;
  void synchronize() override {}
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return state_->future; }
  // recvAnysource: the sender's rank once the message has arrived (-1 before; torch's
  // Work._source_rank()).
  int sourceRank() const override { return work_.source(); }

 private:
  chorus::Work work_;
  std::shared_ptr<WorkState> state_;
};

// Waits (at most `timeout`) until every operation issued by any ProcessGroupChorus has
// completed and its Future's callbacks have run, then releases the finished operations'
// tensors on the calling thread (Graveyard::clear); false on timeout. chorus/torch.py
// calls it at exit: a Python .then() callback still running on torch's inter-op pool while
// the interpreter finalizes would be killed by Python (std::terminate).
bool drain(std::chrono::milliseconds timeout);

// The text of a failed operation's RuntimeError: "<op> failed: <code>: <message>" (code
// as chorus::to_string names it: "peer_lost", ...), and for kTimeout "<op> failed with a
// timeout (timeout): <message>", so that torch's tests and users' regexes
// (" (Timed out|closed|timeout) ") recognise it.
std::string failure_text(const std::string& op, chorus::ErrorCode code, const std::string& message);

}  // namespace chorus::torch_backend
