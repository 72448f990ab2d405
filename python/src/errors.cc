// chorus.Error (code, message, peer_rank, seq) and one subclass per chorus::ErrorCode;
// every chorus::Error thrown by the library (or by these bindings) is raised as the
// subclass of its code, with the same message.
#include "errors.h"

#include <Python.h>

#include <array>

#include "bindings.h"

namespace chorus::python {

void throw_invalid(const std::string& message) {
  throw Error(ErrorCode::kInvalidArgument, message);
}

namespace {

struct ClassSpec {
  ErrorCode code;
  const char* name;
  PyObject* builtin;  // also derives from this builtin (or null)
  const char* doc;
};

constexpr int kNumCodes = 9;
// Created once at import and kept for the life of the process.
std::array<PyObject*, kNumCodes> g_classes{};

PyObject* make_class(py::module_& m, const char* name, PyObject* bases, py::dict attrs,
                     const char* doc) {
  const std::string qualified = std::string("chorus.") + name;
  PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, attrs.ptr());
  if (cls == nullptr) throw py::error_already_set();
  m.add_object(name, py::handle(cls));  // add_object takes its own reference
  return cls;
}

void raise(const Error& e) {
  const int idx = static_cast<int>(e.code());
  PyObject* cls = (idx > 0 && idx < kNumCodes) ? g_classes[idx] : g_classes[0];
  py::object inst =
      py::reinterpret_steal<py::object>(PyObject_CallOneArg(cls, py::str(e.message()).ptr()));
  if (!inst) return;  // the constructor's own exception stays set
  inst.attr("code") = py::cast(e.code());
  inst.attr("message") = py::str(e.message());
  inst.attr("peer_rank") = py::int_(e.peer_rank());
  inst.attr("seq") = py::int_(e.seq());
  PyErr_SetObject(cls, inst.ptr());
}

}  // namespace

void bind_errors(py::module_& m) {
  const std::array<ClassSpec, kNumCodes - 1> specs = {{
      {ErrorCode::kInvalidArgument, "InvalidArgumentError", PyExc_ValueError,
       "A bad argument; the message names it and its value. Also a ValueError."},
      {ErrorCode::kTimeout, "TimeoutError", PyExc_TimeoutError,
       "A deadline passed (timeout, CHORUS_TIMEOUT, CHORUS_CONNECT_TIMEOUT). Also the "
       "builtin TimeoutError."},
      {ErrorCode::kPeerLost, "PeerLostError", nullptr,
       "A peer closed its connection or its process is gone; peer_rank names it."},
      {ErrorCode::kDesync, "DesyncError", nullptr,
       "Ranks disagree about the operation (kind, size, order)."},
      {ErrorCode::kAborted, "AbortedError", nullptr, "The communicator was aborted."},
      {ErrorCode::kIo, "IoError", nullptr, "A system call failed (socket, file, ...)."},
      {ErrorCode::kNotSupported, "NotSupportedError", nullptr,
       "A valid request the library does not implement."},
      {ErrorCode::kInternal, "InternalError", nullptr, "A bug in Chorus; please report it."},
  }};
  py::dict base_attrs;
  base_attrs["code"] = py::cast(ErrorCode::kInternal);
  base_attrs["message"] = py::str("");
  base_attrs["peer_rank"] = py::int_(-1);
  base_attrs["seq"] = py::int_(-1);
  g_classes[0] =
      make_class(m, "Error", PyExc_Exception, base_attrs,
                 "Base class of every Chorus error. Attributes: code (chorus.ErrorCode), message "
                 "(the C++ chorus::Error message), peer_rank and seq (-1 when not applicable).");
  for (const ClassSpec& s : specs) {
    py::dict attrs;
    attrs["code"] = py::cast(s.code);
    py::tuple bases = s.builtin ? py::make_tuple(py::handle(g_classes[0]), py::handle(s.builtin))
                                : py::make_tuple(py::handle(g_classes[0]));
    g_classes[static_cast<int>(s.code)] = make_class(m, s.name, bases.ptr(), attrs, s.doc);
  }
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      raise(e);
    }
  });
}

}  // namespace chorus::python
