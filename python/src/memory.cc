// chorus.mem_alloc: registered memory (include/chorus/memory.h) as a Python object with
// the buffer protocol, so numpy.frombuffer and torch.frombuffer view it without a copy.
// The memory is freed when the object is collected, which the buffer protocol delays
// until the last array viewing it is gone.
#include <cstdint>
#include <string>

#include "bindings.h"
#include "chorus/memory.h"
#include "errors.h"

namespace chorus::python {
namespace {

class RegisteredBuffer {
 public:
  explicit RegisteredBuffer(std::size_t nbytes) : data_(mem_alloc(nbytes)), nbytes_(nbytes) {}
  ~RegisteredBuffer() {
    try {
      mem_free(data_);
    } catch (...) {  // not expected: data_ came from mem_alloc and is freed once
    }
  }
  RegisteredBuffer(const RegisteredBuffer&) = delete;
  RegisteredBuffer& operator=(const RegisteredBuffer&) = delete;
  void* data() const { return data_; }
  std::size_t nbytes() const { return nbytes_; }

 private:
  void* data_;
  std::size_t nbytes_;
};

}  // namespace

void bind_memory(py::module_& m) {
  py::class_<RegisteredBuffer>(
      m, "RegisteredBuffer", py::buffer_protocol(),
      "Writable bytes from chorus.mem_alloc (memory the ranks of a host map). View them with "
      "numpy.frombuffer(buf, dtype) or torch.frombuffer(buf, dtype=...).")
      .def_buffer([](RegisteredBuffer& b) {
        return py::buffer_info(b.data(), 1, py::format_descriptor<std::uint8_t>::format(), 1,
                               {static_cast<py::ssize_t>(b.nbytes())}, {1});
      })
      .def_property_readonly("nbytes", &RegisteredBuffer::nbytes)
      .def("__len__", &RegisteredBuffer::nbytes);
  m.def(
      "mem_alloc",
      [](long long nbytes) {
        if (nbytes <= 0)
          throw_invalid("mem_alloc: nbytes must be > 0, got " + std::to_string(nbytes));
        return std::make_unique<RegisteredBuffer>(static_cast<std::size_t>(nbytes));
      },
      py::arg("nbytes"),
      "nbytes of zeroed registered memory (C++ chorus::mem_alloc): collectives whose buffers "
      "lie in it on every rank of a host move peers' bytes with plain copies through maps, "
      "and the automatic choice follows. Freed when the object and every view are gone.");
}

}  // namespace chorus::python
