// chorus.Store (the rendezvous key-value store), chorus.TcpStoreServer and the store
// factories connect_tcp_store / open_file_store. Waiting calls release the GIL.
#include "chorus/store.h"

#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "bindings.h"
#include "errors.h"
#include "types.h"

namespace chorus::python {

namespace {

using std::chrono::milliseconds;

constexpr milliseconds kDefaultWait{60000};

// str (stored as UTF-8), bytes, or any buffer-protocol object (its bytes).
std::vector<std::uint8_t> to_bytes(py::handle value) {
  py::object bytes;
  if (py::isinstance<py::str>(value)) {
    bytes = py::reinterpret_steal<py::object>(PyUnicode_AsUTF8String(value.ptr()));
  } else if (PyObject_CheckBuffer(value.ptr())) {
    bytes = py::reinterpret_steal<py::object>(PyBytes_FromObject(value.ptr()));
  }
  if (!bytes) {
    PyErr_Clear();
    throw_invalid("value must be bytes, a buffer or str");
  }
  const std::string s = bytes.cast<std::string>();
  return std::vector<std::uint8_t>(s.begin(), s.end());
}

// A started TCP store server; close() (or garbage collection) stops it.
struct PyStoreServer {
  std::unique_ptr<TcpStoreServer> server;
  TcpStoreServer& get() {
    if (!server) throw_invalid("the store server was closed");
    return *server;
  }
};

}  // namespace

void bind_store(py::module_& m) {
  py::class_<Store, std::shared_ptr<Store>>(
      m, "Store", "Key-value store shared by the ranks of a job (rendezvous). Timeouts in seconds.")
      .def(
          "set",
          [](Store& s, const std::string& key, py::object value) {
            auto v = to_bytes(value);
            py::gil_scoped_release release;
            s.set(key, v);
          },
          py::arg("key"), py::arg("value"))
      .def(
          "get",
          [](Store& s, const std::string& key, py::object timeout) {
            const milliseconds t = to_millis(timeout, "timeout", kDefaultWait);
            std::vector<std::uint8_t> v;
            {
              py::gil_scoped_release release;
              v = s.get(key, t);
            }
            return py::bytes(reinterpret_cast<const char*>(v.data()), v.size());
          },
          py::arg("key"), py::arg("timeout") = py::none(),
          "The value of key, waiting up to timeout (default 60 s) for it to be set.")
      .def(
          "add",
          [](Store& s, const std::string& key, std::int64_t delta) {
            py::gil_scoped_release release;
            return s.add(key, delta);
          },
          py::arg("key"), py::arg("delta"))
      .def(
          "wait",
          [](Store& s, const std::vector<std::string>& keys, py::object timeout) {
            const milliseconds t = to_millis(timeout, "timeout", kDefaultWait);
            py::gil_scoped_release release;
            s.wait(keys, t);
          },
          py::arg("keys"), py::arg("timeout") = py::none())
      .def(
          "check",
          [](Store& s, const std::string& key) {
            py::gil_scoped_release release;
            return s.check(key);
          },
          py::arg("key"));

  py::class_<PyStoreServer>(
      m, "TcpStoreServer",
      "A TCP store server on a background thread, until close() or garbage collection.")
      .def(py::init([](const std::string& host, int port) {
             return PyStoreServer{TcpStoreServer::start(host, port)};
           }),
           py::arg("host") = "0.0.0.0", py::arg("port") = 0)
      .def_property_readonly("port", [](PyStoreServer& s) { return s.get().port(); })
      .def("close",
           [](PyStoreServer& s) {
             py::gil_scoped_release release;
             s.server.reset();
           })
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyStoreServer& s, py::args) {
        py::gil_scoped_release release;
        s.server.reset();
      });

  m.def(
      "connect_tcp_store",
      [](const std::string& host, int port, py::object timeout) {
        const milliseconds t = to_millis(timeout, "timeout", kDefaultWait);
        py::gil_scoped_release release;
        return connect_tcp_store(host, port, t);
      },
      py::arg("host"), py::arg("port"), py::arg("timeout") = py::none(),
      "Client of a TcpStoreServer at host:port, connecting within timeout (default 60 s).");
  m.def(
      "open_file_store",
      [](const std::string& directory) {
        py::gil_scoped_release release;
        return open_file_store(directory);
      },
      py::arg("directory"), "A store kept as files in directory (which every rank must see).");
}

}  // namespace chorus::python
