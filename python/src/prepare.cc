// Argument preparation of every collective (see prepare.h). All checks raise
// InvalidArgumentError naming the argument; nothing reaches the library unchecked.
#include "prepare.h"

#include <optional>
#include <string>
#include <vector>

#include "errors.h"
#include "types.h"

namespace chorus::python {

namespace {

using OptView = std::optional<View>;

OptView maybe_view(py::handle obj, const char* arg, bool writable) {
  if (obj.is_none()) return std::nullopt;
  return OptView(std::in_place, obj, arg, writable);
}

const View* ptr(const OptView& v) { return v ? &*v : nullptr; }

void check_rank(const char* name, int value, int size) {
  if (value < 0 || value >= size)
    throw_invalid(std::string(name) + "=" + std::to_string(value) + " is out of range [0, " +
                  std::to_string(size) + ")");
}

// Raises unless a and b are disjoint or `a` starts exactly at `allowed` (an in-place form).
void check_overlap(const OptView& a, const OptView& b, const void* allowed, const char* rule) {
  if (!a || !b || !overlaps(*a, *b)) return;
  if (allowed != nullptr && a->data() == allowed) return;
  throw_invalid(std::string(a->arg()) + " and " + b->arg() + " overlap; " + rule);
}

const char* at(const OptView& v, std::size_t elements) {
  return static_cast<const char*>(v->data()) + elements * v->itemsize();
}

void keep(Prepared& p, OptView& v) {
  if (v) p.keep->views.push_back(std::move(*v));
}

// A sequence of element counts or displacements (list, tuple, numpy integer array).
std::vector<std::size_t> to_sizes(py::handle obj, const char* arg) {
  if (py::isinstance<py::str>(obj) || !PySequence_Check(obj.ptr()))
    throw_invalid(std::string(arg) + " must be a sequence of non-negative ints");
  std::vector<std::size_t> out;
  const auto seq = py::reinterpret_borrow<py::sequence>(obj);
  for (std::size_t i = 0; i < seq.size(); ++i) {
    const std::string name = std::string(arg) + "[" + std::to_string(i) + "]";
    py::object item = seq[i];
    auto index = py::reinterpret_steal<py::object>(PyNumber_Index(item.ptr()));
    if (!index) {
      PyErr_Clear();
      throw_invalid(name + " is not an int");
    }
    const long long v = PyLong_AsLongLong(index.ptr());
    if (v == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      throw_invalid(name + " is out of range");
    }
    if (v < 0) throw_invalid(name + "=" + std::to_string(v) + " is negative");
    out.push_back(static_cast<std::size_t>(v));
  }
  return out;
}

std::vector<std::size_t> prefix_sums(const std::vector<std::size_t>& counts) {
  std::vector<std::size_t> displs(counts.size());
  std::size_t sum = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    displs[i] = sum;
    sum += counts[i];
  }
  return displs;
}

// Checks one side of all_to_all_v against its buffer and stores the arrays in p.keep.
std::span<const std::size_t> keep_array(Prepared& p, std::vector<std::size_t> v) {
  p.keep->arrays.push_back(std::move(v));
  return p.keep->arrays.back();
}

void check_v_side(const OptView& buf, const std::vector<std::size_t>& counts,
                  const std::vector<std::size_t>& displs, const char* counts_name,
                  const char* displs_name, int size) {
  if (counts.size() != static_cast<std::size_t>(size))
    throw_invalid(std::string(counts_name) + " has " + std::to_string(counts.size()) +
                  " entries, expected " + std::to_string(size) + " (one per rank)");
  if (displs.size() != static_cast<std::size_t>(size))
    throw_invalid(std::string(displs_name) + " has " + std::to_string(displs.size()) +
                  " entries, expected " + std::to_string(size) + " (one per rank)");
  for (int r = 0; r < size; ++r) {
    if (counts[r] == 0) continue;
    if (displs[r] > buf->count() || counts[r] > buf->count() - displs[r])
      throw_invalid(std::string(buf->arg()) + " has " + std::to_string(buf->count()) +
                    " elements, but " + counts_name + "[" + std::to_string(r) +
                    "]=" + std::to_string(counts[r]) + " at " + displs_name + "[" +
                    std::to_string(r) + "]=" + std::to_string(displs[r]) + " reaches beyond it");
  }
}

}  // namespace

Prepared prepare_all_reduce(Communicator& c, py::handle send, py::handle recv, py::handle op,
                            py::handle dtype) {
  Prepared p;
  p.op = to_reduce_op(op, "op");
  OptView s(std::in_place, send, "send", recv.is_none());
  OptView r = maybe_view(recv, "recv", true);
  p.dtype = resolve_dtype(to_dtype(dtype, "dtype"), {ptr(s), ptr(r)});
  p.count = s->count();
  if (r) check_count(*r, p.count, "as many as send");
  check_overlap(r, s, s->data(), "in place, pass recv=None or the same array");
  p.send = s->data();
  p.recv = r ? r->data() : s->data();
  p.out = py::reinterpret_borrow<py::object>(recv.is_none() ? send : recv);
  keep(p, s);
  keep(p, r);
  return p;
}

Prepared prepare_reduce(Communicator& c, py::handle send, py::handle recv, py::handle op, int root,
                        py::handle dtype) {
  Prepared p;
  p.op = to_reduce_op(op, "op");
  check_rank("root", root, c.size());
  p.root = root;
  const bool is_root = c.rank() == root;
  OptView s(std::in_place, send, "send", recv.is_none() && is_root);
  OptView r = maybe_view(recv, "recv", true);
  p.dtype = resolve_dtype(to_dtype(dtype, "dtype"), {ptr(s), ptr(r)});
  p.count = s->count();
  if (r) check_count(*r, p.count, "as many as send");
  check_overlap(r, s, s->data(), "in place, pass recv=None or the same array");
  p.send = s->data();
  p.recv = r ? r->data() : (is_root ? s->data() : nullptr);
  if (is_root) p.out = py::reinterpret_borrow<py::object>(recv.is_none() ? send : recv);
  keep(p, s);
  keep(p, r);
  return p;
}

Prepared prepare_broadcast(Communicator& c, py::handle send, py::handle recv, int root,
                           py::handle dtype) {
  Prepared p;
  check_rank("root", root, c.size());
  p.root = root;
  if (send.is_none() && (recv.is_none() || c.rank() == root))
    throw_invalid(c.rank() == root ? "send is None on the root (it holds the data to broadcast)"
                                   : "send and recv are both None");
  OptView s = maybe_view(send, "send", recv.is_none());
  OptView r = maybe_view(recv, "recv", true);
  p.dtype = resolve_dtype(to_dtype(dtype, "dtype"), {ptr(s), ptr(r)});
  p.count = r ? r->count() : s->count();
  if (r && s) check_count(*s, p.count, "as many as recv");
  check_overlap(r, s, s ? s->data() : nullptr, "in place, pass recv=None or the same array");
  p.send = s ? s->data() : nullptr;
  p.recv = r ? r->data() : s->data();
  p.out = py::reinterpret_borrow<py::object>(recv.is_none() ? send : recv);
  keep(p, s);
  keep(p, r);
  return p;
}

Prepared prepare_all_gather(Communicator& c, py::handle send, py::handle recv, py::handle dtype) {
  Prepared p;
  OptView s(std::in_place, send, "send", false);
  OptView r(std::in_place, recv, "recv", true);
  p.dtype = resolve_dtype(to_dtype(dtype, "dtype"), {ptr(s), ptr(r)});
  p.count = s->count();
  check_count(*r, p.count * c.size(), "size * send's count");
  check_overlap(s, r, at(r, p.count * c.rank()),
                "in place, send must be exactly recv's block of this rank");
  p.send = s->data();
  p.recv = r->data();
  p.out = py::reinterpret_borrow<py::object>(recv);
  keep(p, s);
  keep(p, r);
  return p;
}

Prepared prepare_reduce_scatter(Communicator& c, py::handle send, py::handle recv, py::handle op,
                                py::handle dtype) {
  Prepared p;
  p.op = to_reduce_op(op, "op");
  OptView s(std::in_place, send, "send", false);
  OptView r(std::in_place, recv, "recv", true);
  p.dtype = resolve_dtype(to_dtype(dtype, "dtype"), {ptr(s), ptr(r)});
  p.count = r->count();
  check_count(*s, p.count * c.size(), "size * recv's count");
  if (overlaps(*s, *r) && r->data() != s->data())
    check_overlap(r, s, at(s, p.count * c.rank()),
                  "in place, recv must be send's block of this rank or start where send starts");
  p.send = s->data();
  p.recv = r->data();
  p.out = py::reinterpret_borrow<py::object>(recv);
  keep(p, s);
  keep(p, r);
  return p;
}

Prepared prepare_all_to_all(Communicator& c, py::handle send, py::handle recv, py::handle dtype) {
  Prepared p;
  OptView s(std::in_place, send, "send", recv.is_none());
  OptView r = maybe_view(recv, "recv", true);
  p.dtype = resolve_dtype(to_dtype(dtype, "dtype"), {ptr(s), ptr(r)});
  const std::size_t n = static_cast<std::size_t>(c.size());
  if (s->count() % n != 0)
    throw_invalid("send has " + std::to_string(s->count()) +
                  " elements, not a multiple of the communicator size " + std::to_string(n));
  p.count = s->count() / n;
  if (r) check_count(*r, s->count(), "as many as send");
  check_overlap(r, s, s->data(), "in place, pass recv=None or the same array");
  p.send = s->data();
  p.recv = r ? r->data() : s->data();
  p.out = py::reinterpret_borrow<py::object>(recv.is_none() ? send : recv);
  keep(p, s);
  keep(p, r);
  return p;
}

Prepared prepare_all_to_all_v(Communicator& c, py::handle send, py::handle send_counts,
                              py::handle recv, py::handle recv_counts, py::handle send_displs,
                              py::handle recv_displs, py::handle dtype) {
  Prepared p;
  OptView s(std::in_place, send, "send", false);
  OptView r(std::in_place, recv, "recv", true);
  p.dtype = resolve_dtype(to_dtype(dtype, "dtype"), {ptr(s), ptr(r)});
  auto sc = to_sizes(send_counts, "send_counts");
  auto rc = to_sizes(recv_counts, "recv_counts");
  auto sd = send_displs.is_none() ? prefix_sums(sc) : to_sizes(send_displs, "send_displs");
  auto rd = recv_displs.is_none() ? prefix_sums(rc) : to_sizes(recv_displs, "recv_displs");
  check_v_side(s, sc, sd, "send_counts", "send_displs", c.size());
  check_v_side(r, rc, rd, "recv_counts", "recv_displs", c.size());
  check_overlap(s, r, nullptr, "all_to_all_v cannot run in place");
  p.send = s->data();
  p.recv = r->data();
  p.send_counts = keep_array(p, std::move(sc));
  p.send_displs = keep_array(p, std::move(sd));
  p.recv_counts = keep_array(p, std::move(rc));
  p.recv_displs = keep_array(p, std::move(rd));
  p.out = py::reinterpret_borrow<py::object>(recv);
  keep(p, s);
  keep(p, r);
  return p;
}

Prepared prepare_gather(Communicator& c, py::handle send, py::handle recv, int root,
                        py::handle dtype) {
  Prepared p;
  check_rank("root", root, c.size());
  p.root = root;
  const bool is_root = c.rank() == root;
  if (is_root && recv.is_none()) throw_invalid("recv is None on the root (it receives the data)");
  OptView s(std::in_place, send, "send", false);
  OptView r = maybe_view(recv, "recv", true);
  p.dtype = resolve_dtype(to_dtype(dtype, "dtype"), {ptr(s), ptr(r)});
  p.count = s->count();
  if (r) check_count(*r, p.count * c.size(), "size * send's count");
  check_overlap(s, r, nullptr, "gather cannot run in place");
  p.send = s->data();
  p.recv = r ? r->data() : nullptr;
  if (is_root) p.out = py::reinterpret_borrow<py::object>(recv);
  keep(p, s);
  keep(p, r);
  return p;
}

Prepared prepare_scatter(Communicator& c, py::handle send, py::handle recv, int root,
                         py::handle dtype) {
  Prepared p;
  check_rank("root", root, c.size());
  p.root = root;
  const bool is_root = c.rank() == root;
  if (is_root && send.is_none()) throw_invalid("send is None on the root (it holds the data)");
  OptView s = maybe_view(send, "send", false);
  OptView r(std::in_place, recv, "recv", true);
  p.dtype = resolve_dtype(to_dtype(dtype, "dtype"), {ptr(s), ptr(r)});
  p.count = r->count();
  if (s) check_count(*s, p.count * c.size(), "size * recv's count");
  check_overlap(s, r, nullptr, "scatter cannot run in place");
  p.send = s ? s->data() : nullptr;
  p.recv = r->data();
  p.out = py::reinterpret_borrow<py::object>(recv);
  keep(p, s);
  keep(p, r);
  return p;
}

Prepared prepare_p2p(Communicator& c, py::handle buf, int peer, bool writable, py::handle dtype) {
  check_rank("peer", peer, c.size());
  return prepare_any_source(buf, dtype, peer, writable);
}

Prepared prepare_any_source(py::handle buf, py::handle dtype, int peer, bool writable) {
  Prepared p;
  OptView b(std::in_place, buf, "buf", writable);
  p.dtype = resolve_dtype(to_dtype(dtype, "dtype"), {ptr(b)});
  p.count = b->count();
  p.root = peer;
  p.send = b->data();
  p.recv = writable ? b->data() : nullptr;
  if (writable) p.out = py::reinterpret_borrow<py::object>(buf);
  keep(p, b);
  return p;
}

}  // namespace chorus::python
