// chorus.Bucketer: gradient bucketing over numpy arrays (chorus::Bucketer). The arrays
// registered with add() are referenced by the Bucketer for its whole life.
#include "chorus/bucketer.h"

#include <memory>
#include <vector>

#include "bindings.h"
#include "buffers.h"
#include "errors.h"
#include "py_comm.h"
#include "stream_arg.h"
#include "types.h"

namespace chorus::python {

namespace {

struct PyBucketer {
  py::object comm;  // the chorus.Communicator, kept alive
  std::unique_ptr<Bucketer> bucketer;
  std::vector<View> tensors;

  ~PyBucketer() {
    {
      py::gil_scoped_release release;
      bucketer.reset();  // waits for in-flight buckets, which use the arrays
    }
    tensors.clear();
  }
  Bucketer& get() {
    if (comm.cast<PyComm&>().closed()) throw_invalid("the Bucketer's communicator was closed");
    return *bucketer;
  }
};

std::unique_ptr<PyBucketer> make(py::object comm, py::object bucket_bytes, py::object op,
                                 py::object compression, py::object stream) {
  PyComm& c = comm.cast<PyComm&>();
  BucketerOptions o;
  const long long bytes = bucket_bytes.cast<long long>();
  if (bytes < 0)
    throw_invalid("bucket_bytes=" + std::to_string(bytes) + " must be >= 0 (0 = from the cost model)");
  o.bucket_bytes = static_cast<std::size_t>(bytes);
  o.op = to_reduce_op(op, "op");
  o.compression = to_compression(compression, "compression");
  o.stream = to_stream(stream);
  auto b = std::make_unique<PyBucketer>();
  b->comm = comm;
  b->bucketer = std::make_unique<Bucketer>(c.get(), o);
  return b;
}

}  // namespace

void bind_bucketer(py::module_& m) {
  py::class_<PyBucketer>(
      m, "Bucketer",
      "Packs many arrays into a few large all_reduces that start as soon as their bucket "
      "is complete (like DDP's gradient buckets). Every rank add()s the same arrays in "
      "the same order; each iteration: mark_ready(i) for each array, then finish().")
      .def(py::init(&make), py::arg("comm"), py::arg("bucket_bytes") = 25 << 20,
           py::arg("op") = "sum", py::arg("compression") = "none", py::arg("stream") = py::none())
      .def(
          "add",
          [](PyBucketer& b, py::object array, py::object dtype) {
            View v(array, "array", true);
        if (v.count() == 0) throw_invalid("array is empty; the Bucketer needs non-empty arrays");
            const DataType t = resolve_dtype(to_dtype(dtype, "dtype"), {&v});
            const std::size_t index = b.get().add(v.data(), v.count(), t);
            b.tensors.push_back(std::move(v));
            return index;
          },
          py::arg("array"), py::kw_only(), py::arg("dtype") = py::none(),
          "Registers a writable contiguous array; returns its index.")
      .def(
          "mark_ready",
          [](PyBucketer& b, std::size_t index) {
            Bucketer& x = b.get();
            b.comm.cast<PyComm&>().blocking([&](Communicator&) { x.mark_ready(index); });
          },
          py::arg("index"), "The array's values are final for this iteration.")
      .def(
          "finish",
          [](PyBucketer& b) {
            Bucketer& x = b.get();
            b.comm.cast<PyComm&>().blocking([&](Communicator&) { x.finish(); });
          },
          "Starts the remaining buckets, waits for all; every array then holds the result.")
      .def_property_readonly("num_buckets", [](PyBucketer& b) { return b.get().num_buckets(); })
      .def_property_readonly("num_tensors", [](PyBucketer& b) { return b.get().num_tensors(); });
}

}  // namespace chorus::python
