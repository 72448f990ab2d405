// Streams, synchronize, group calls (group_start/group_end and `with comm.group():`) and
// sub-communicators (split, new_group) of chorus.Communicator.
#include <optional>
#include <vector>

#include "bindings.h"
#include "errors.h"
#include "py_comm.h"

namespace chorus::python {

namespace {

using Cls = py::class_<PyComm, std::unique_ptr<PyComm>>;

void group_start(PyComm& c) {
  c.blocking([](Communicator& x) { x.group_start(); });
  ++c.group_depth;
}

void group_end(PyComm& c) {
  struct Leave {
    PyComm& c;
    ~Leave() {
      if (c.group_depth > 0 && --c.group_depth == 0) c.end_group();
    }
  } leave{c};
  c.blocking([](Communicator& x) { x.group_end(); });
}

// `with comm.group():` runs group_start() on entry and group_end() on exit.
struct GroupScope {
  py::object comm;
};

py::object wrap(std::optional<Communicator> c) {
  if (!c) return py::none();
  return py::cast(std::make_unique<PyComm>(std::move(*c)));
}

std::vector<int> to_ranks(py::handle obj) {
  if (py::isinstance<py::str>(obj) || !py::isinstance<py::iterable>(obj))
    throw_invalid("ranks must be a sequence of ints");
  std::vector<int> ranks;
  for (py::handle item : py::reinterpret_borrow<py::iterable>(obj)) {
    if (!py::isinstance<py::int_>(item) && !py::hasattr(item, "__index__"))
      throw_invalid("ranks must be a sequence of ints");
    ranks.push_back(py::int_(py::reinterpret_borrow<py::object>(item)).cast<int>());
  }
  return ranks;
}

}  // namespace

void bind_groups(py::module_& m) {
  auto cls = py::reinterpret_borrow<Cls>(m.attr("Communicator"));
  py::class_<GroupScope>(m, "_GroupScope")
      .def("__enter__",
           [](GroupScope& g) {
             group_start(g.comm.cast<PyComm&>());
             return g.comm;
           })
      .def("__exit__", [](GroupScope& g, py::args) {
        group_end(g.comm.cast<PyComm&>());
        return false;
      });
  cls.def(
         "create_stream",
         [](PyComm& c, const std::string& name) { return c.get().create_stream(name); },
         py::arg("name"), "A new named stream (its worker starts on first use).")
      .def(
          "synchronize",
          [](PyComm& c) {
            c.blocking([](Communicator& x) { x.synchronize(); });
            c.prune();
          },
          "Waits for every operation issued so far, on every stream; raises the first failure.")
      .def("group_start", &group_start,
           "Until the matching group_end(), operations are only recorded (their buffers "
           "must stay untouched); group_end() launches them together and waits.")
      .def("group_end", &group_end)
      .def(
          "group", [](py::object self) { return GroupScope{self}; },
          "Context manager: `with comm.group(): ...` = group_start() ... group_end().")
      .def(
          "split",
          [](PyComm& c, int color, int key) {
            return wrap(c.blocking([&](Communicator& x) { return x.split(color, key); }));
          },
          py::arg("color"), py::arg("key") = 0,
          "Collective: ranks with the same color form a new communicator ordered by "
          "(key, rank); color=-1 (chorus.NO_COLOR) returns None.")
      .def(
          "new_group",
          [](PyComm& c, py::object ranks) {
            const std::vector<int> list = to_ranks(ranks);
            return wrap(c.blocking([&](Communicator& x) { return x.new_group(list); }));
          },
          py::arg("ranks"),
          "Collective: a communicator of the listed ranks (new rank = position); None on "
          "ranks not listed.");
  m.attr("NO_COLOR") = Communicator::kNoColor;
}

}  // namespace chorus::python
