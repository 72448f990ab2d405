// The collectives and point-to-point calls of chorus.Communicator, each blocking (GIL
// released while it runs; returns the output buffer) and as *_async (returns a
// chorus.Work at once; the buffers are kept alive until it completes).
#include "bindings.h"
#include "prepare.h"
#include "py_comm.h"
#include "stream_arg.h"

namespace chorus::python {

namespace {

using namespace pybind11::literals;
using Cls = py::class_<PyComm, std::unique_ptr<PyComm>>;

template <class F>
py::object run_blocking(PyComm& c, Prepared p, F f) {
  c.blocking([&](Communicator& comm) { f(comm, p); });
  // Inside a group the call only recorded its buffers: keep them until group_end().
  if (c.group_depth > 0) c.hold_for_group(p.keep);
  return p.out;
}

template <class F>
PyWork run_async(py::object self, Prepared p, py::handle stream, F f) {
  PyComm& c = self.cast<PyComm&>();
  const Stream s = to_stream(stream);
  Work w = c.blocking([&](Communicator& comm) { return f(comm, p, s); });
  c.hold_until_done(w, p.keep);
  return PyWork{w, self, c.group_depth > 0};
}

PyComm& comm_of(py::object& self) { return self.cast<PyComm&>(); }

void bind_reductions(Cls& cls) {
  cls.def(
      "all_reduce",
      [](PyComm& c, py::object send, py::object recv, py::object op, py::object dtype) {
        return run_blocking(c, prepare_all_reduce(c.get(), send, recv, op, dtype),
                            [](Communicator& x, const Prepared& p) {
                              x.all_reduce(p.send, p.recv, p.count, p.dtype, p.op);
                            });
      },
      "send"_a, "recv"_a = py::none(), "op"_a = "sum", py::kw_only(), "dtype"_a = py::none(),
      "recv = op over ranks of send (recv=None: in place in send). Returns the result buffer.");
  cls.def(
      "all_reduce_async",
      [](py::object self, py::object send, py::object recv, py::object op, py::object dtype,
         py::object stream) {
        return run_async(self, prepare_all_reduce(comm_of(self).get(), send, recv, op, dtype),
                         stream, [](Communicator& x, const Prepared& p, const Stream& s) {
                           return x.all_reduce_async(p.send, p.recv, p.count, p.dtype, p.op, s);
                         });
      },
      "send"_a, "recv"_a = py::none(), "op"_a = "sum", py::kw_only(), "dtype"_a = py::none(),
      "stream"_a = py::none());

  cls.def(
      "reduce",
      [](PyComm& c, py::object send, py::object recv, py::object op, int root, py::object dtype) {
        return run_blocking(c, prepare_reduce(c.get(), send, recv, op, root, dtype),
                            [](Communicator& x, const Prepared& p) {
                              x.reduce(p.send, p.recv, p.count, p.dtype, p.op, p.root);
                            });
      },
      "send"_a, "recv"_a = py::none(), "op"_a = "sum", "root"_a = 0, py::kw_only(),
      "dtype"_a = py::none(),
      "Like all_reduce, but only root receives the result (recv=None: in place on root). "
      "Returns the result buffer on root, None elsewhere.");
  cls.def(
      "reduce_async",
      [](py::object self, py::object send, py::object recv, py::object op, int root,
         py::object dtype, py::object stream) {
        return run_async(self, prepare_reduce(comm_of(self).get(), send, recv, op, root, dtype),
                         stream, [](Communicator& x, const Prepared& p, const Stream& s) {
                           return x.reduce_async(p.send, p.recv, p.count, p.dtype, p.op, p.root, s);
                         });
      },
      "send"_a, "recv"_a = py::none(), "op"_a = "sum", "root"_a = 0, py::kw_only(),
      "dtype"_a = py::none(), "stream"_a = py::none());

  cls.def(
      "reduce_scatter",
      [](PyComm& c, py::object send, py::object recv, py::object op, py::object dtype) {
        return run_blocking(c, prepare_reduce_scatter(c.get(), send, recv, op, dtype),
                            [](Communicator& x, const Prepared& p) {
                              x.reduce_scatter(p.send, p.recv, p.count, p.dtype, p.op);
                            });
      },
      "send"_a, "recv"_a, "op"_a = "sum", py::kw_only(), "dtype"_a = py::none(),
      "send holds size * len(recv) elements; recv = block `rank` of the reduction.");
  cls.def(
      "reduce_scatter_async",
      [](py::object self, py::object send, py::object recv, py::object op, py::object dtype,
         py::object stream) {
        return run_async(self, prepare_reduce_scatter(comm_of(self).get(), send, recv, op, dtype),
                         stream, [](Communicator& x, const Prepared& p, const Stream& s) {
                           return x.reduce_scatter_async(p.send, p.recv, p.count, p.dtype, p.op, s);
                         });
      },
      "send"_a, "recv"_a, "op"_a = "sum", py::kw_only(), "dtype"_a = py::none(),
      "stream"_a = py::none());
}

void bind_copies(Cls& cls) {
  cls.def(
      "broadcast",
      [](PyComm& c, py::object send, py::object recv, int root, py::object dtype) {
        return run_blocking(c, prepare_broadcast(c.get(), send, recv, root, dtype),
                            [](Communicator& x, const Prepared& p) {
                              x.broadcast(p.send, p.recv, p.count, p.dtype, p.root);
                            });
      },
      "send"_a, "recv"_a = py::none(), "root"_a = 0, py::kw_only(), "dtype"_a = py::none(),
      "Copies root's send to every rank's recv (recv=None: in place in send; send may be "
      "None off the root). Returns the result buffer.");
  cls.def(
      "broadcast_async",
      [](py::object self, py::object send, py::object recv, int root, py::object dtype,
         py::object stream) {
        return run_async(self, prepare_broadcast(comm_of(self).get(), send, recv, root, dtype),
                         stream, [](Communicator& x, const Prepared& p, const Stream& s) {
                           return x.broadcast_async(p.send, p.recv, p.count, p.dtype, p.root, s);
                         });
      },
      "send"_a, "recv"_a = py::none(), "root"_a = 0, py::kw_only(), "dtype"_a = py::none(),
      "stream"_a = py::none());

  cls.def(
      "all_gather",
      [](PyComm& c, py::object send, py::object recv, py::object dtype) {
        return run_blocking(c, prepare_all_gather(c.get(), send, recv, dtype),
                            [](Communicator& x, const Prepared& p) {
                              x.all_gather(p.send, p.recv, p.count, p.dtype);
                            });
      },
      "send"_a, "recv"_a, py::kw_only(), "dtype"_a = py::none(),
      "recv (size * len(send) elements) = every rank's send in rank order.");
  cls.def(
      "all_gather_async",
      [](py::object self, py::object send, py::object recv, py::object dtype, py::object stream) {
        return run_async(self, prepare_all_gather(comm_of(self).get(), send, recv, dtype), stream,
                         [](Communicator& x, const Prepared& p, const Stream& s) {
                           return x.all_gather_async(p.send, p.recv, p.count, p.dtype, s);
                         });
      },
      "send"_a, "recv"_a, py::kw_only(), "dtype"_a = py::none(), "stream"_a = py::none());

  cls.def(
      "gather",
      [](PyComm& c, py::object send, py::object recv, int root, py::object dtype) {
        return run_blocking(c, prepare_gather(c.get(), send, recv, root, dtype),
                            [](Communicator& x, const Prepared& p) {
                              x.gather(p.send, p.recv, p.count, p.dtype, p.root);
                            });
      },
      "send"_a, "recv"_a = py::none(), "root"_a = 0, py::kw_only(), "dtype"_a = py::none(),
      "root's recv (size * len(send) elements) = every rank's send in rank order.");
  cls.def(
      "gather_async",
      [](py::object self, py::object send, py::object recv, int root, py::object dtype,
         py::object stream) {
        return run_async(self, prepare_gather(comm_of(self).get(), send, recv, root, dtype), stream,
                         [](Communicator& x, const Prepared& p, const Stream& s) {
                           return x.gather_async(p.send, p.recv, p.count, p.dtype, p.root, s);
                         });
      },
      "send"_a, "recv"_a = py::none(), "root"_a = 0, py::kw_only(), "dtype"_a = py::none(),
      "stream"_a = py::none());

  cls.def(
      "scatter",
      [](PyComm& c, py::object send, py::object recv, int root, py::object dtype) {
        return run_blocking(c, prepare_scatter(c.get(), send, recv, root, dtype),
                            [](Communicator& x, const Prepared& p) {
                              x.scatter(p.send, p.recv, p.count, p.dtype, p.root);
                            });
      },
      "send"_a, "recv"_a, "root"_a = 0, py::kw_only(), "dtype"_a = py::none(),
      "Block r of root's send (size * len(recv) elements) goes to rank r's recv.");
  cls.def(
      "scatter_async",
      [](py::object self, py::object send, py::object recv, int root, py::object dtype,
         py::object stream) {
        return run_async(self, prepare_scatter(comm_of(self).get(), send, recv, root, dtype),
                         stream, [](Communicator& x, const Prepared& p, const Stream& s) {
                           return x.scatter_async(p.send, p.recv, p.count, p.dtype, p.root, s);
                         });
      },
      "send"_a, "recv"_a, "root"_a = 0, py::kw_only(), "dtype"_a = py::none(),
      "stream"_a = py::none());
}

void bind_exchanges(Cls& cls) {
  cls.def(
      "all_to_all",
      [](PyComm& c, py::object send, py::object recv, py::object dtype) {
        return run_blocking(c, prepare_all_to_all(c.get(), send, recv, dtype),
                            [](Communicator& x, const Prepared& p) {
                              x.all_to_all(p.send, p.recv, p.count, p.dtype);
                            });
      },
      "send"_a, "recv"_a = py::none(), py::kw_only(), "dtype"_a = py::none(),
      "Block p of send goes to rank p; block q of recv comes from rank q (recv=None: in place).");
  cls.def(
      "all_to_all_async",
      [](py::object self, py::object send, py::object recv, py::object dtype, py::object stream) {
        return run_async(self, prepare_all_to_all(comm_of(self).get(), send, recv, dtype), stream,
                         [](Communicator& x, const Prepared& p, const Stream& s) {
                           return x.all_to_all_async(p.send, p.recv, p.count, p.dtype, s);
                         });
      },
      "send"_a, "recv"_a = py::none(), py::kw_only(), "dtype"_a = py::none(),
      "stream"_a = py::none());

  cls.def(
      "all_to_all_v",
      [](PyComm& c, py::object send, py::object sc, py::object recv, py::object rc, py::object sd,
         py::object rd, py::object dtype) {
        return run_blocking(c, prepare_all_to_all_v(c.get(), send, sc, recv, rc, sd, rd, dtype),
                            [](Communicator& x, const Prepared& p) {
                              x.all_to_all_v(p.send, p.send_counts, p.send_displs, p.recv,
                                             p.recv_counts, p.recv_displs, p.dtype);
                            });
      },
      "send"_a, "send_counts"_a, "recv"_a, "recv_counts"_a, "send_displs"_a = py::none(),
      "recv_displs"_a = py::none(), py::kw_only(), "dtype"_a = py::none(),
      "send_counts[p] elements at send_displs[p] go to rank p; recv_counts[q] from rank q land "
      "at recv_displs[q] (elements; displacements default to packed). Not in place.");
  cls.def(
      "all_to_all_v_async",
      [](py::object self, py::object send, py::object sc, py::object recv, py::object rc,
         py::object sd, py::object rd, py::object dtype, py::object stream) {
        return run_async(
            self, prepare_all_to_all_v(comm_of(self).get(), send, sc, recv, rc, sd, rd, dtype),
            stream, [](Communicator& x, const Prepared& p, const Stream& s) {
              return x.all_to_all_v_async(p.send, p.send_counts, p.send_displs, p.recv,
                                          p.recv_counts, p.recv_displs, p.dtype, s);
            });
      },
      "send"_a, "send_counts"_a, "recv"_a, "recv_counts"_a, "send_displs"_a = py::none(),
      "recv_displs"_a = py::none(), py::kw_only(), "dtype"_a = py::none(), "stream"_a = py::none());
}

void bind_p2p(Cls& cls) {
  // prepare_p2p with the tag set.
  auto p2p = [](Communicator& c, py::handle buf, int peer, bool recv, py::handle dtype, int tag) {
    Prepared p = prepare_p2p(c, buf, peer, recv, dtype);
    p.tag = tag;
    return p;
  };
  cls.def(
      "send",
      [p2p](PyComm& c, py::object buf, int peer, py::object dtype, int tag) {
        run_blocking(c, p2p(c.get(), buf, peer, false, dtype, tag),
                     [](Communicator& x, const Prepared& p) {
                       x.send(p.send, p.count, p.dtype, p.root, p.tag);
                     });
      },
      "buf"_a, "peer"_a, py::kw_only(), "dtype"_a = py::none(), "tag"_a = 0,
      "Sends buf to rank peer (matched by its recv with the same tag; each tag >= 0 of a "
      "pair is its own ordered sequence).");
  cls.def(
      "send_async",
      [p2p](py::object self, py::object buf, int peer, py::object dtype, int tag,
            py::object stream) {
        return run_async(self, p2p(comm_of(self).get(), buf, peer, false, dtype, tag), stream,
                         [](Communicator& x, const Prepared& p, const Stream& s) {
                           return x.send_async(p.send, p.count, p.dtype, p.root, p.tag, s);
                         });
      },
      "buf"_a, "peer"_a, py::kw_only(), "dtype"_a = py::none(), "tag"_a = 0,
      "stream"_a = py::none());
  cls.def(
      "recv",
      [p2p](PyComm& c, py::object buf, int peer, py::object dtype, int tag) {
        return run_blocking(c, p2p(c.get(), buf, peer, true, dtype, tag),
                            [](Communicator& x, const Prepared& p) {
                              x.recv(p.recv, p.count, p.dtype, p.root, p.tag);
                            });
      },
      "buf"_a, "peer"_a, py::kw_only(), "dtype"_a = py::none(), "tag"_a = 0,
      "Receives into buf from rank peer (the sizes must match; `tag` as for send). Returns "
      "buf.");
  cls.def(
      "recv_async",
      [p2p](py::object self, py::object buf, int peer, py::object dtype, int tag,
            py::object stream) {
        return run_async(self, p2p(comm_of(self).get(), buf, peer, true, dtype, tag), stream,
                         [](Communicator& x, const Prepared& p, const Stream& s) {
                           return x.recv_async(p.recv, p.count, p.dtype, p.root, p.tag, s);
                         });
      },
      "buf"_a, "peer"_a, py::kw_only(), "dtype"_a = py::none(), "tag"_a = 0,
      "stream"_a = py::none());
  cls.def(
      "recv_any",
      [](PyComm& c, py::object buf, py::object dtype, int tag) {
        Prepared p = prepare_any_source(buf, dtype);
        const int source = c.blocking(
            [&](Communicator& x) { return x.recv_any(p.recv, p.count, p.dtype, tag); });
        return source;
      },
      "buf"_a, py::kw_only(), "dtype"_a = py::none(), "tag"_a = 0,
      "Receives into buf the next message of `tag` that any other rank sends to this rank; "
      "returns the sender's rank (that pair's order holds: a later recv from it gets its "
      "following message).");
  cls.def(
      "recv_any_async",
      [](py::object self, py::object buf, py::object dtype, int tag, py::object stream) {
        Prepared p = prepare_any_source(buf, dtype);
        p.tag = tag;
        return run_async(self, std::move(p), stream,
                         [](Communicator& x, const Prepared& p, const Stream& s) {
                           return x.recv_any_async(p.recv, p.count, p.dtype, p.tag, s);
                         });
      },
      "buf"_a, py::kw_only(), "dtype"_a = py::none(), "tag"_a = 0, "stream"_a = py::none(),
      "recv_any, asynchronous: Work.source names the sender once it has arrived.");
  cls.def(
      "barrier", [](PyComm& c) { c.blocking([](Communicator& x) { x.barrier(); }); },
      "Returns once every rank has entered the barrier.");
  cls.def(
      "barrier_async",
      [](py::object self, py::object stream) {
        return run_async(
            self, Prepared{}, stream,
            [](Communicator& x, const Prepared&, const Stream& s) { return x.barrier_async(s); });
      },
      py::kw_only(), "stream"_a = py::none());
}

}  // namespace

void bind_collectives(py::module_& m) {
  auto cls = py::reinterpret_borrow<Cls>(m.attr("Communicator"));
  bind_reductions(cls);
  bind_copies(cls);
  bind_exchanges(cls);
  bind_p2p(cls);
}

}  // namespace chorus::python
