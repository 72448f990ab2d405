// chorus.Communicator: creation (init_from_env, init), identity, timeouts, fault
// tolerance (agree, abort, shrink, health_check) and the flight record. Blocking calls
// release the GIL.
#include "chorus/communicator.h"

#include <string>

#include "bindings.h"
#include "chorus/store.h"
#include "errors.h"
#include "py_comm.h"
#include "types.h"

namespace chorus::python {

namespace {

using std::chrono::milliseconds;

// Keyword arguments -> Options: each keyword is an Options field (chorus/options.h);
// None leaves it to the CHORUS_* variable. Timeouts in seconds or datetime.timedelta; the
// others as str (written as the variable would be: "1M", "tcp", "json"), int or bool.
Options make_options(const py::kwargs& kwargs) {
  Options o;
  for (const auto& item : kwargs) {
    const std::string key = py::str(item.first);
    const py::handle value = item.second;
    if (value.is_none()) continue;
    if (key == "timeout" || key == "connect_timeout") {
      (key == "timeout" ? o.timeout : o.connect_timeout) =
          to_millis(value, key.c_str(), milliseconds(0));
      continue;
    }
    std::string text;
    if (py::isinstance<py::bool_>(value)) text = value.cast<bool>() ? "1" : "0";
    else if (py::isinstance<py::int_>(value)) text = std::to_string(value.cast<long long>());
    else if (py::isinstance<py::str>(value)) text = value.cast<std::string>();
    else
      throw_invalid(key + " must be a str, int or bool, got " +
                    std::string(py::str(py::type::handle_of(value).attr("__name__"))));
    set_option(o, key, text);  // InvalidArgumentError for an unknown field or a bad value
  }
  return o;
}

std::unique_ptr<PyComm> wrap(Communicator c) { return std::make_unique<PyComm>(std::move(c)); }

void bind_health_report(py::module_& m) {
  py::class_<HealthReport>(m, "HealthReport",
                           "What Communicator.health_check() found (never raised: a report).")
      .def_readonly("ok", &HealthReport::ok)
      .def_readonly("code", &HealthReport::code)
      .def_readonly("message", &HealthReport::message)
      .def_readonly("ranks_responding", &HealthReport::ranks_responding)
      .def_property_readonly(
          "elapsed", [](const HealthReport& r) { return r.elapsed.count() / 1e6; },
          "Seconds spent in health_check().")
      .def("__bool__", [](const HealthReport& r) { return r.ok; })
      .def("__repr__", [](const HealthReport& r) {
        return "HealthReport(ok=" + std::string(r.ok ? "True" : "False") +
               ", code=" + to_string(r.code) +
               ", ranks_responding=" + std::to_string(r.ranks_responding) + ", message='" +
               r.message + "')";
      });
}

}  // namespace

void bind_communicator(py::module_& m) {
  bind_health_report(m);
  py::class_<PyComm, std::unique_ptr<PyComm>> cls(
      m, "Communicator", "A group of ranks that run collectives together (chorus::Communicator).");
  cls.def_static(
         "init_from_env",
         [](const py::kwargs& kwargs) {
           const Options o = make_options(kwargs);
           return wrap([&] {
             py::gil_scoped_release release;
             return Communicator::init_from_env(o);
           }());
         },
         "Builds a communicator from the launcher's environment (chorus-run, torchrun, "
         "mpirun, srun). Keyword arguments are chorus::Options fields (timeout, "
         "connect_timeout, algo, transport, chunk_bytes, ..., docs/CONFIG.md); timeouts in "
         "seconds (or datetime.timedelta), the others as the CHORUS_* variable's text, int "
         "or bool; None = the CHORUS_* variable.")
      .def_static(
          "init",
          [](int rank, int size, std::shared_ptr<Store> store, const py::kwargs& kwargs) {
            const Options o = make_options(kwargs);
            return wrap([&] {
              py::gil_scoped_release release;
              return Communicator::init(rank, size, std::move(store), o);
            }());
          },
          py::arg("rank"), py::arg("size"), py::arg("store"),
          "Builds a communicator of `size` ranks through an explicit store (keyword "
          "arguments as for init_from_env).")
      .def_property_readonly("rank", [](PyComm& c) { return c.get().rank(); })
      .def_property_readonly("size", [](PyComm& c) { return c.get().size(); })
      .def_property_readonly("transport_name",
                             [](PyComm& c) { return c.get().transport_name(); },
                             "What carries the bytes: 'shm', 'tcp' or 'shm+tcp'.")
      .def_property_readonly("closed", &PyComm::closed)
      .def("close", &PyComm::close,
           "Destroys the communicator now (pending operations fail). Idempotent.")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyComm& c, py::args) { c.close(); })
      .def("__repr__",
           [](PyComm& c) {
             if (c.closed()) return std::string("<chorus.Communicator (closed)>");
             return "<chorus.Communicator rank " + std::to_string(c.get().rank()) + " of " +
                    std::to_string(c.get().size()) + ">";
           })
      .def(
          "agree",
          [](PyComm& c, bool flag) {
            return c.blocking([&](Communicator& comm) { return comm.agree(flag); });
          },
          py::arg("flag"), "Fault-aware OR across ranks: True everywhere if any rank passed True.")
      .def(
          "abort",
          [](PyComm& c) {
            if (!c.closed()) c.get().abort();
          },
          "Fails every pending and later operation with AbortedError, here and on the "
          "other ranks. Never blocks or raises (a no-op once closed); callable from any thread.")
      .def_static(
          "abort_all", [] { Communicator::abort_all(); },
          "abort() on every live communicator of this process.")
      .def(
          "shrink",
          [](PyComm& c) {
            return wrap(c.blocking([](Communicator& comm) { return comm.shrink(); }));
          },
          "A new communicator of the surviving ranks; this one is aborted.")
      .def(
          "health_check",
          [](PyComm& c, py::object timeout) {
            const milliseconds t = to_millis(timeout, "timeout", milliseconds(0));
            return c.blocking([&](Communicator& comm) { return comm.health_check(t); });
          },
          py::arg("timeout") = py::none(),
          "A small verified collective under a deadline (seconds; None = the "
          "communicator's timeout). Returns a HealthReport, never raises for failures.")
      .def(
          "set_timeout",
          [](PyComm& c, py::object timeout) {
            c.get().set_timeout(to_millis(timeout, "timeout", milliseconds(0)));
          },
          py::arg("timeout"),
          "Per-operation deadline in seconds for later operations; 0 or None restores "
          "the configured one.")
      .def_property_readonly(
          "timeout", [](PyComm& c) { return to_seconds(c.get().timeout()); },
          "The deadline (seconds) in force for the next operation.")
      .def(
          "flight_record", [](PyComm& c) { return c.get().flight_record(); },
          "The flight recorder's text (docs/DIAGNOSTICS.md).")
      .def(
          "flight_record_json", [](PyComm& c) { return c.get().flight_record_json(); },
          "The same record as one JSON object on one line (json.loads it).")
      .def(
          "stats",
          [](PyComm& c) {
            py::list out;
            for (const auto& r : c.get().stats()) {
              py::dict d;
              d["op"] = r.op;
              d["size_class"] = r.size_class;
              d["count"] = r.count;
              d["bytes"] = r.bytes;
              d["total_us"] = r.total_us;
              d["mean_us"] = r.mean_us;
              d["p50_us"] = r.p50_us;
              d["p99_us"] = r.p99_us;
              d["max_us"] = r.max_us;
              d["busbw_gbps"] = r.busbw_gbps;
              d["algo"] = r.algo;
              out.append(d);
            }
            return out;
          },
          "This rank's per-operation statistics (collected with CHORUS_STATS=1): "
          "one dict per (op, size class).")
      .def(
          "stats_text", [](PyComm& c) { return c.get().stats_text(); },
          "The same statistics as a text table.")
      .def(
          "estimate",
          [](PyComm& c, const std::string& collective, long long count, py::object dtype) {
            if (count < 0) throw_invalid("count=" + std::to_string(count) + " must be >= 0");
            const DataType dt = to_dtype(dtype, "dtype").value_or(DataType::kFloat32);
            const Estimate e =
                c.get().estimate(collective, static_cast<std::size_t>(count), dt);
            py::dict d;
            d["algo"] = e.algo;
            d["predicted_us"] = e.predicted_us;
            d["source"] = e.source;
            d["rule_algo"] = e.rule_algo;
            d["model_algo"] = e.model_algo;
            py::dict cands;
            for (const auto& [name, us] : e.candidates) cands[py::str(name)] = us;
            d["candidates"] = cands;
            return d;
          },
          py::arg("collective"), py::arg("count"), py::arg("dtype") = py::none(),
          "What the communicator would run for `collective` with `count` elements of "
          "`dtype` (default float32), without running it: a dict with algo, predicted_us "
          "(the cost model's time, -1 when it has none), source (override, table, model, "
          "rules), rule_algo, model_algo and candidates ({algorithm: predicted_us}).");
  m.def("_close_all", &close_all_communicators,
        "Closes every live communicator (registered with atexit by chorus/__init__.py).");
}

}  // namespace chorus::python
