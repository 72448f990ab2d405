// The chorus._chorus extension module: the bindings of Chorus's public C++ API
// (include/chorus) that the pure-Python package `chorus` re-exports.
#include "bindings.h"
#include "chorus/info.h"

PYBIND11_MODULE(_chorus, m) {
  namespace cp = chorus::python;
  m.doc() = "Chorus collective communication (bindings of the C++ API in include/chorus).";
  m.attr("__version__") = chorus::version();
  cp::bind_types(m);
  cp::bind_errors(m);
  cp::bind_store(m);
  cp::bind_work(m);
  cp::bind_communicator(m);
  cp::bind_collectives(m);
  cp::bind_groups(m);
  cp::bind_bucketer(m);
  cp::bind_memory(m);
}
