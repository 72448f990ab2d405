// Turns the Python arguments of each collective into checked C++ arguments: pointers,
// element count and dtype derived from the buffers, sizes checked against each other
// and the communicator's size, and the buffers held in a KeepAlive for the call.
#pragma once
#include <pybind11/pybind11.h>

#include <cstddef>
#include <memory>
#include <span>

#include "buffers.h"
#include "chorus/communicator.h"

namespace chorus::python {

namespace py = pybind11;

struct Prepared {
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t count = 0;
  DataType dtype = DataType::kUint8;
  ReduceOp op = ReduceOp::kSum;
  int root = 0;  // root, or peer for send/recv
  int tag = 0;   // send/recv
  // all_to_all_v only: counts and displacements (elements), held in `keep`.
  std::span<const std::size_t> send_counts, send_displs, recv_counts, recv_displs;
  py::object out = py::none();  // what the blocking call returns
  std::shared_ptr<KeepAlive> keep = std::make_shared<KeepAlive>();
};

// Argument names and meaning as in chorus.Communicator's methods (docs in module.cc).
Prepared prepare_all_reduce(Communicator& c, py::handle send, py::handle recv, py::handle op,
                            py::handle dtype);
Prepared prepare_reduce(Communicator& c, py::handle send, py::handle recv, py::handle op, int root,
                        py::handle dtype);
Prepared prepare_broadcast(Communicator& c, py::handle send, py::handle recv, int root,
                           py::handle dtype);
Prepared prepare_all_gather(Communicator& c, py::handle send, py::handle recv, py::handle dtype);
Prepared prepare_reduce_scatter(Communicator& c, py::handle send, py::handle recv, py::handle op,
                                py::handle dtype);
Prepared prepare_all_to_all(Communicator& c, py::handle send, py::handle recv, py::handle dtype);
Prepared prepare_all_to_all_v(Communicator& c, py::handle send, py::handle send_counts,
                              py::handle recv, py::handle recv_counts, py::handle send_displs,
                              py::handle recv_displs, py::handle dtype);
Prepared prepare_gather(Communicator& c, py::handle send, py::handle recv, int root,
                        py::handle dtype);
Prepared prepare_scatter(Communicator& c, py::handle send, py::handle recv, int root,
                         py::handle dtype);
// send (writable = false) or recv (writable = true) of `buf` with `peer`.
Prepared prepare_p2p(Communicator& c, py::handle buf, int peer, bool writable, py::handle dtype);
// prepare_p2p without the peer check (recv_any: peer -1, writable).
Prepared prepare_any_source(py::handle buf, py::handle dtype, int peer = -1, bool writable = true);

}  // namespace chorus::python
