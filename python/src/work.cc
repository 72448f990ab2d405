// chorus.Work (handle of an asynchronous operation: wait, test, state, on_complete) and
// chorus.Stream. Waiting releases the GIL; completion callbacks run with it acquired.
#include "chorus/work.h"

#include <Python.h>

#include <memory>
#include <string>

#include "bindings.h"
#include "chorus/stream.h"
#include "errors.h"
#include "py_comm.h"
#include "stream_arg.h"
#include "types.h"

namespace chorus::python {

namespace {

bool python_alive() { return Py_IsInitialized() && !_Py_IsFinalizing(); }

// A Python object owned from C++ threads: dropped with the GIL acquired (or leaked when
// the interpreter is already gone).
struct GilObject {
  explicit GilObject(py::object o) : obj(std::move(o)) {}
  ~GilObject() {
    if (!python_alive()) {
      obj.release();
      return;
    }
    py::gil_scoped_acquire gil;
    obj = py::object();
  }
  py::object obj;
};

void on_complete(PyWork& w, py::function fn) {
  auto holder = std::make_shared<GilObject>(std::move(fn));
  w.work.on_complete([holder](const Work& done) {
    if (!python_alive()) return;
    py::gil_scoped_acquire gil;
    try {
      holder->obj(PyWork{done, py::none()});
    } catch (py::error_already_set& e) {
      e.discard_as_unraisable("chorus.Work.on_complete callback");
    } catch (const std::exception& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
      PyErr_WriteUnraisable(nullptr);
    }
  });
}

bool wait(PyWork& w, py::object timeout) {
  // A Work of a group still open completes only at group_end(): waiting would hang.
  if (w.grouped && !w.work.test() && w.owner.cast<PyComm&>().group_depth > 0)
    throw_invalid("wait() on a Work of a group that is still open would never return; "
                  "call group_end() first");
  bool done = true;
  if (timeout.is_none()) {
    py::gil_scoped_release release;
    w.work.wait();
  } else {
    const auto ms = to_millis(timeout, "timeout", std::chrono::milliseconds(0));
    py::gil_scoped_release release;
    done = w.work.wait(ms);
  }
  if (done && !w.owner.is_none()) w.owner.cast<PyComm&>().prune();
  return done;
}

std::string repr(const PyWork& w) {
  const char* state = w.work.state() == Work::State::kPending ? "pending"
                      : w.work.state() == Work::State::kDone  ? "done"
                                                              : "failed";
  return "<chorus.Work " + w.work.op() + " seq " + std::to_string(w.work.seq()) + " " + state + ">";
}

}  // namespace

Stream to_stream(py::handle obj) {
  if (obj.is_none()) return Stream{};
  if (!py::isinstance<Stream>(obj))
    throw_invalid("stream must be a chorus.Stream from create_stream() or None");
  return obj.cast<Stream>();
}

void bind_work(py::module_& m) {
  py::class_<Stream>(
      m, "Stream",
      "A named, ordered lane of asynchronous operations on one communicator "
      "(Communicator.create_stream). Operations on different streams may run concurrently.")
      .def_property_readonly("name", &Stream::name)
      .def_property_readonly("id", &Stream::id)
      .def_property_readonly("is_default", &Stream::is_default)
      .def("__repr__", [](const Stream& s) {
        return "<chorus.Stream " + std::to_string(s.id()) + " '" + s.name() + "'>";
      });

  py::class_<PyWork> work(
      m, "Work",
      "Handle of one asynchronous operation. Its buffers stay referenced (and must not "
      "be modified) until it completes.");
  py::enum_<Work::State>(work, "State")
      .value("PENDING", Work::State::kPending)
      .value("DONE", Work::State::kDone)
      .value("FAILED", Work::State::kFailed);
  work.def("wait", &wait, py::arg("timeout") = py::none(),
           "Blocks (GIL released) until the operation finishes and returns True; raises "
           "its chorus.Error if it failed. With a timeout (seconds), returns False when "
           "still pending after it.")
      .def(
          "test", [](const PyWork& w) { return w.work.test(); },
          "True once the operation finished (successfully or not). Never blocks.")
      .def_property_readonly("state", [](const PyWork& w) { return w.work.state(); })
      .def_property_readonly("code", [](const PyWork& w) { return w.work.code(); })
      .def_property_readonly("message", [](const PyWork& w) { return w.work.message(); })
      .def_property_readonly("seq", [](const PyWork& w) { return w.work.seq(); })
      .def_property_readonly("op", [](const PyWork& w) { return w.work.op(); })
      .def_property_readonly("source", [](const PyWork& w) { return w.work.source(); })
      .def("on_complete", &on_complete, py::arg("callback"),
           "Calls callback(work) once the operation finished, on the thread completing it "
           "(with the GIL acquired), or at once if it already has. Exceptions are "
           "reported as unraisable and ignored.")
      .def("__repr__", &repr);
}

}  // namespace chorus::python
