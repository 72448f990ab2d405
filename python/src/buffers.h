// Buffer-protocol arguments (numpy arrays, bytearray, memoryview, array.array, ...):
// acquiring them with the checks every collective needs (C-contiguous, writable where
// written, a dtype Chorus has), so a bad buffer raises InvalidArgumentError naming the
// argument instead of producing wrong data.
#pragma once
#include <Python.h>
#include <pybind11/pybind11.h>

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "chorus/types.h"

namespace chorus::python {

namespace py = pybind11;

// One acquired buffer. Holds the exporter's buffer (and so the object) until destroyed;
// destroy it with the GIL held.
class View {
 public:
  // Acquires `obj`'s buffer. Raises InvalidArgumentError naming `arg` when obj has no
  // buffer, is not C-contiguous, or is read-only while `writable` is requested.
  View(py::handle obj, const char* arg, bool writable);
  View(View&& other) noexcept;
  View& operator=(View&&) = delete;
  View(const View&) = delete;
  ~View();

  const char* arg() const { return arg_; }
  void* data() const { return view_.buf; }
  std::size_t nbytes() const { return static_cast<std::size_t>(view_.len); }
  std::size_t itemsize() const { return static_cast<std::size_t>(view_.itemsize); }
  // The DataType of the elements, or nullopt when Chorus has none for them.
  std::optional<DataType> inferred() const { return inferred_; }
  // "float32", "int16", "format 'Zf'", ...: for messages.
  const std::string& type_name() const { return type_name_; }
  // Number of elements of `dtype` (which has this buffer's item size).
  std::size_t count() const { return nbytes() / itemsize(); }
  py::object object() const { return py::reinterpret_borrow<py::object>(view_.obj); }

 private:
  Py_buffer view_{};
  bool held_ = false;
  const char* arg_;
  std::optional<DataType> inferred_;
  std::string type_name_;
};

// The element type of a call: `explicit_dtype` when given (every buffer must have its
// item size), else the type every buffer holds (they must agree).
DataType resolve_dtype(std::optional<DataType> explicit_dtype,
                       std::initializer_list<const View*> views);

// Raises InvalidArgumentError unless `v` holds exactly `expected` elements, stating
// what `expected` is ("count * size", ...).
void check_count(const View& v, std::size_t expected, const char* what);

// True when the byte ranges of a and b intersect (empty buffers never do).
bool overlaps(const View& a, const View& b);

// The buffers (and other objects) an operation uses, kept alive until it completes.
// (all_to_all_v's count and displacement arrays are kept here too.)
struct KeepAlive {
  std::vector<View> views;
  std::vector<std::vector<std::size_t>> arrays;
};

}  // namespace chorus::python
