// The Python-side owners: PyComm wraps a chorus::Communicator and keeps the buffers of
// its asynchronous and grouped operations alive until they complete; PyWork wraps a
// chorus::Work and keeps its communicator alive.
#pragma once
#include <pybind11/pybind11.h>

#include <atomic>
#include <memory>
#include <utility>
#include <vector>

#include "buffers.h"
#include "chorus/communicator.h"
#include "chorus/work.h"

namespace chorus::python {

namespace py = pybind11;

class PyComm {
 public:
  explicit PyComm(Communicator comm);
  // Destroys the communicator with the GIL released (its stream workers may be running
  // Python callbacks), then drops the buffers it held.
  ~PyComm();
  PyComm(const PyComm&) = delete;
  PyComm& operator=(const PyComm&) = delete;

  // The communicator; raises InvalidArgumentError after close().
  Communicator& get();
  // Runs f(communicator) with the GIL released. close() from another thread meanwhile
  // aborts the communicator and waits for f to return before destroying it.
  template <class F>
  auto blocking(F&& f) {
    Communicator& comm = get();
    ++active_;  // counted before the GIL is released, so close() cannot miss this call
    py::gil_scoped_release release;
    Leave leave{active_};  // uncounted before the GIL is taken back (close() may hold it)
    return f(comm);
  }
  bool closed() const { return !comm_; }
  // Destroys the communicator now (pending operations fail with AbortedError, as the
  // C++ destructor does). Idempotent. Call with the GIL held.
  void close();

  // Keeps `keep` alive until `work` is complete (the buffers of an async call).
  void hold_until_done(const Work& work, std::shared_ptr<KeepAlive> keep);
  // Keeps `keep` alive until the outermost group ends (blocking calls inside a group
  // only record their buffers).
  void hold_for_group(std::shared_ptr<KeepAlive> keep) { group_held_.push_back(std::move(keep)); }
  // Drops what completed operations held. Call with the GIL held.
  void prune();

  int group_depth = 0;  // mirrors group_start()/group_end() nesting
  void end_group();     // called after the outermost group_end() returned or threw

 private:
  struct Leave {
    std::atomic<int>& n;
    ~Leave() { --n; }
  };
  std::unique_ptr<Communicator> comm_;
  std::atomic<int> active_{0};  // threads inside blocking()
  std::vector<std::pair<Work, std::shared_ptr<KeepAlive>>> in_flight_;
  std::vector<std::shared_ptr<KeepAlive>> group_held_;
};

struct PyWork {
  Work work;
  py::object owner;      // the chorus.Communicator (None for the Work handed to callbacks)
  bool grouped = false;  // issued inside a group: only group_end() completes it
};

// Every live PyComm, closed at interpreter exit (chorus/__init__.py registers it with
// atexit) so no stream worker runs Python code while the interpreter shuts down.
void close_all_communicators();

}  // namespace chorus::python
