// PyComm: ownership of a communicator and of the Python buffers its pending operations use.
#include "py_comm.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>

#include "errors.h"

namespace chorus::python {

namespace {

// Touched only with the GIL held.
std::set<PyComm*>& live() {
  static auto* comms = new std::set<PyComm*>();  // leaked: outlives interpreter teardown
  return *comms;
}

}  // namespace

PyComm::PyComm(Communicator comm) : comm_(std::make_unique<Communicator>(std::move(comm))) {
  live().insert(this);
}

PyComm::~PyComm() {
  live().erase(this);
  close();
}

Communicator& PyComm::get() {
  if (!comm_) throw_invalid("the communicator was closed");
  return *comm_;
}

void PyComm::close() {
  if (comm_) {
    std::unique_ptr<Communicator> doomed = std::move(comm_);
    py::gil_scoped_release release;
    if (active_.load() > 0) {
      doomed->abort();  // unblocks the threads inside blocking() promptly
      while (active_.load() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    doomed.reset();  // fails pending operations, joins the stream workers
  }
  // Every operation has finished now: its buffers may go.
  in_flight_.clear();
  group_held_.clear();
}

void PyComm::hold_until_done(const Work& work, std::shared_ptr<KeepAlive> keep) {
  prune();
  in_flight_.emplace_back(work, std::move(keep));
}

void PyComm::prune() {
  std::erase_if(in_flight_, [](const auto& entry) { return entry.first.test(); });
}

void PyComm::end_group() {
  group_held_.clear();
  prune();
}

void close_all_communicators() {
  const std::vector<PyComm*> comms(live().begin(), live().end());
  for (PyComm* c : comms) c->close();
}

}  // namespace chorus::python
