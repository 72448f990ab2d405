// The pieces of the chorus._chorus extension: one bind_* function per source file, called
// in order by module.cc.
#pragma once
#include <pybind11/pybind11.h>

namespace chorus::python {

namespace py = pybind11;

void bind_errors(py::module_& m);        // errors.cc: chorus.Error and one subclass per code
void bind_types(py::module_& m);         // types.cc: DataType, ReduceOp, Compression enums
void bind_store(py::module_& m);         // store.cc: Store, TcpStoreServer, store factories
void bind_work(py::module_& m);          // work.cc: Work, Stream
void bind_communicator(py::module_& m);  // communicator.cc: life cycle, fault tolerance
void bind_collectives(py::module_& m);   // collectives.cc: blocking and async collectives
void bind_groups(py::module_& m);        // groups.cc: streams, group calls, split/new_group
void bind_bucketer(py::module_& m);      // bucketer.cc: Bucketer
void bind_memory(py::module_& m);        // memory.cc: mem_alloc, RegisteredBuffer

}  // namespace chorus::python
