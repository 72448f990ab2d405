// Every collective kind on one communicator, checked bit for bit (see exercise.h).
#include "exercise.h"

#include <cstdint>

#include "rank_runner.h"
#include "reference.h"

namespace chorus::mp {
namespace {

using chorus::testing::check;
using chorus::testing::step;

struct Case {
  DataType t;
  ReduceOp op;
  std::size_t count;
};

// Small, odd and multi-chunk counts; one case straddles the eager threshold.
constexpr Case kCases[] = {{DataType::kFloat32, ReduceOp::kSum, 1031},
                           {DataType::kInt8, ReduceOp::kMax, 7},
                           {DataType::kBfloat16, ReduceOp::kAvg, 1},
                           {DataType::kInt64, ReduceOp::kProd, 20011}};

void expect_equal(const Case& c, const Buffer& got, const Buffer& want, std::size_t count,
                  const std::string& what) {
  const std::string bad = compare(c.t, got.data(), want.data(), count);
  check(bad.empty(), what + ": " + bad);
  const std::string guard = got.guard_damage(what);
  check(guard.empty(), guard);
}

void reductions(Communicator& comm, const Case& c, int salt) {
  const int n = comm.size(), r = comm.rank(), root = salt % n;
  const std::size_t k = c.count;
  Buffer in(c.t, k * n), out(c.t, k), want(c.t, k);
  fill_reduce_input(c.t, c.op, r, n, 0, k, salt, in.data());
  fill_reduce_expected(c.t, c.op, n, 0, k, salt, want.data());
  std::string what = label("all_reduce", c.t, to_string(c.op), k, "out-of-place");
  step(what);
  comm.all_reduce(in.data(), out.data(), k, c.t, c.op);
  expect_equal(c, out, want, k, what);

  what = label("reduce", c.t, to_string(c.op), k, "out-of-place", root);
  step(what);
  out.fill(0);
  comm.reduce(in.data(), r == root ? out.data() : nullptr, k, c.t, c.op, root);
  if (r == root) expect_equal(c, out, want, k, what);

  what = label("reduce_scatter", c.t, to_string(c.op), k, "out-of-place");
  step(what);
  fill_reduce_input(c.t, c.op, r, n, 0, k * n, salt, in.data());
  fill_reduce_expected(c.t, c.op, n, r * k, k, salt, want.data());
  comm.reduce_scatter(in.data(), out.data(), k, c.t, c.op);
  expect_equal(c, out, want, k, what);
}

void movements(Communicator& comm, const Case& c, int salt) {
  const int n = comm.size(), r = comm.rank(), root = (salt + 1) % n;
  const std::size_t k = c.count;
  Buffer mine(c.t, k), one(c.t, k), one_want(c.t, k), all(c.t, k * n), all_want(c.t, k * n);
  std::string what = label("broadcast", c.t, "", k, "out-of-place", root);
  step(what);
  fill_pattern(c.t, root, 0, k, salt, one_want.data());
  fill_pattern(c.t, r, 0, k, salt, mine.data());
  comm.broadcast(r == root ? mine.data() : nullptr, one.data(), k, c.t, root);
  expect_equal(c, one, one_want, k, what);

  what = label("all_gather", c.t, "", k, "out-of-place");
  step(what);
  for (int q = 0; q < n; ++q) fill_pattern(c.t, q, 0, k, salt, all_want.at(q * k));
  comm.all_gather(mine.data(), all.data(), k, c.t);
  expect_equal(c, all, all_want, k * n, what);

  what = label("gather", c.t, "", k, "out-of-place", root);
  step(what);
  all.fill(0);
  comm.gather(mine.data(), r == root ? all.data() : nullptr, k, c.t, root);
  if (r == root) expect_equal(c, all, all_want, k * n, what);

  what = label("all_to_all", c.t, "", k, "out-of-place");
  step(what);
  Buffer send(c.t, k * n);
  fill_pattern(c.t, r, 0, k * n, salt, send.data());  // block p goes to rank p
  for (int q = 0; q < n; ++q) fill_pattern(c.t, q, r * k, k, salt, all_want.at(q * k));
  comm.all_to_all(send.data(), all.data(), k, c.t);
  expect_equal(c, all, all_want, k * n, what);

  what = label("scatter", c.t, "", k, "out-of-place", root);
  step(what);
  fill_pattern(c.t, root, r * k, k, salt, one_want.data());
  comm.scatter(r == root ? send.data() : nullptr, one.data(), k, c.t, root);
  expect_equal(c, one, one_want, k, what);
}

// all_to_all_v: rank a sends (a + b) % 3 + 1 elements to rank b.
void all_to_all_v(Communicator& comm, const Case& c, int salt) {
  const int n = comm.size(), r = comm.rank();
  std::vector<std::size_t> sc(n), sd(n), rc(n), rd(n);
  std::size_t st = 0, rt = 0;
  for (int p = 0; p < n; ++p) {
    sc[p] = rc[p] = static_cast<std::size_t>((r + p) % 3 + 1);
    sd[p] = st;
    rd[p] = rt;
    st += sc[p];
    rt += rc[p];
  }
  Buffer send(c.t, st), recv(c.t, rt), want(c.t, rt);
  for (int p = 0; p < n; ++p) {
    fill_pattern(c.t, r, 100 * p, sc[p], salt, send.at(sd[p]));
    fill_pattern(c.t, p, 100 * r, rc[p], salt, want.at(rd[p]));
  }
  const std::string what = label("all_to_all_v", c.t, "", st, "out-of-place");
  step(what);
  comm.all_to_all_v(send.data(), sc, sd, recv.data(), rc, rd, c.t);
  expect_equal(c, recv, want, rt, what);
}

// Around the ring: even ranks send first, odd ranks receive first.
void ring_send_recv(Communicator& comm, const Case& c, int salt) {
  const int n = comm.size(), r = comm.rank();
  if (n < 2) return;
  const int right = (r + 1) % n, left = (r + n - 1) % n;
  Buffer out(c.t, c.count), in(c.t, c.count), want(c.t, c.count);
  fill_pattern(c.t, r, 7, c.count, salt, out.data());
  fill_pattern(c.t, left, 7, c.count, salt, want.data());
  const std::string what = label("send/recv", c.t, "", c.count, "ring");
  step(what);
  if (r % 2 == 0) comm.send(out.data(), c.count, c.t, right);
  comm.recv(in.data(), c.count, c.t, left);
  if (r % 2 == 1) comm.send(out.data(), c.count, c.t, right);
  expect_equal(c, in, want, c.count, what);
}

}  // namespace

void exercise_every_kind(Communicator& comm, int salt) {
  for (const Case& c : kCases) {
    ++salt;
    reductions(comm, c, salt);
    movements(comm, c, salt);
    all_to_all_v(comm, c, salt);
    ring_send_recv(comm, c, salt);
  }
  step("barrier");
  comm.barrier();
}

void expect_members(Communicator& comm, const std::vector<int>& old, int my_old,
                    const std::string& what) {
  const int n = static_cast<int>(old.size());
  check(comm.size() == n, what + ": size " + std::to_string(comm.size()) + ", expected " +
                              std::to_string(n));
  int want_rank = -1;
  for (int i = 0; i < n; ++i)
    if (old[i] == my_old) want_rank = i;
  check(comm.rank() == want_rank, what + ": rank " + std::to_string(comm.rank()) +
                                      " for old rank " + std::to_string(my_old) +
                                      ", expected " + std::to_string(want_rank));
  step(what + ": all_gather of old ranks");
  const std::int32_t mine = my_old;
  std::vector<std::int32_t> got(n, -1);
  comm.all_gather(&mine, got.data(), 1, DataType::kInt32);
  for (int i = 0; i < n; ++i)
    check(got[i] == old[i], what + ": rank " + std::to_string(i) + " is old rank " +
                                std::to_string(got[i]) + ", expected " + std::to_string(old[i]));
}

}  // namespace chorus::mp
