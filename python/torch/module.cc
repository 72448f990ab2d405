// chorus._chorus_torch: exposes ProcessGroupChorus to Python as a subclass of torch's
// ProcessGroup (pybind11 shares the type with torch's own module, which must be imported
// first; chorus/torch.py does that and registers the backend).
#include <pybind11/chrono.h>
#include <pybind11/pybind11.h>
#include <torch/csrc/utils/pybind.h>

#include "process_group.h"

namespace py = pybind11;
using chorus::torch_backend::ProcessGroupChorus;

PYBIND11_MODULE(_chorus_torch, m) {
  m.doc() = "Chorus's torch.distributed backend (torch 1.13 ProcessGroup)";
  py::module_::import("torch.distributed");
  py::class_<ProcessGroupChorus, c10d::ProcessGroup, c10::intrusive_ptr<ProcessGroupChorus>>(
      m, "ProcessGroupChorus")
      .def(py::init([](const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                       std::chrono::milliseconds timeout) {
             return c10::make_intrusive<ProcessGroupChorus>(store, rank, size, timeout);
           }),
           py::arg("store"), py::arg("rank"), py::arg("size"), py::arg("timeout"),
           py::call_guard<py::gil_scoped_release>());
  m.def("_drain",
        [](double seconds) {
          return chorus::torch_backend::drain(std::chrono::milliseconds(
              static_cast<std::int64_t>(seconds * 1000)));
        },
        py::arg("seconds"), py::call_guard<py::gil_scoped_release>(),
        "Waits until every operation in flight has completed and its Future's callbacks have "
        "run (at most `seconds`); False on timeout.");
}
