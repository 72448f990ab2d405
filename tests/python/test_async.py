"""Asynchronous operations from Python: every *_async collective, Work (wait with and
without timeout, test, state, code, op, seq), streams, on_complete callbacks (run with
the GIL), buffers kept alive until completion, synchronize(), group calls."""
import gc
import sys
import time

import numpy as np

import chorus
from harness import check, check_equal, expect_error, main

N = 1 << 16


def test_work_basics(comm):
    n = comm.size
    x = np.full(N, comm.rank + 1, dtype=np.float32)
    w = comm.all_reduce_async(x)
    check(isinstance(w, chorus.Work), "all_reduce_async returns a Work")
    check(w.wait() is True, "wait() returns True")
    check(w.test() and w.state == chorus.Work.State.DONE, "done")
    check(w.code == chorus.ErrorCode.OK and w.message == "", "no error")
    check(w.op == "all_reduce" and w.seq >= 0, f"identity: {w!r}")
    check_equal(x, np.full(N, n * (n + 1) / 2, dtype=np.float32), "all_reduce_async result")


def test_every_async_collective(comm):
    n, r = comm.size, comm.rank
    a = np.full(8, r, dtype=np.int64)
    out = np.zeros(8, np.int64)
    gathered = np.zeros(8 * n, np.int64)
    rs = np.zeros(8, np.int64)
    a2a = np.zeros(8 * n, np.int64)
    works = [
        comm.all_reduce_async(a, out, op="max"),
        comm.broadcast_async(np.full(8, 7 if r == 0 else 0, np.int64), root=0),
        comm.all_gather_async(a, gathered),
        comm.reduce_scatter_async(np.full(8 * n, r, np.int64), rs),
        comm.all_to_all_async(np.arange(8 * n, dtype=np.int64) + 100 * r, a2a),
        comm.reduce_async(a, np.zeros(8, np.int64) if r == 0 else None, root=0),
        comm.gather_async(a, np.zeros(8 * n, np.int64) if r == 0 else None, root=0),
        comm.scatter_async(np.zeros(8 * n, np.int64) if r == 0 else None, np.zeros(8, np.int64)),
        comm.all_to_all_v_async(np.zeros(n, np.int64), [1] * n, np.zeros(n, np.int64), [1] * n),
        comm.barrier_async(),
    ]
    if n % 2 == 0:
        peer = r ^ 1
        works.append(comm.send_async(np.full(4, r, np.int32), peer))
        got = np.zeros(4, np.int32)
        works.append(comm.recv_async(got, peer))
    for w in works:
        w.wait()
    check_equal(out, np.full(8, n - 1), "max")
    check_equal(gathered, np.repeat(np.arange(n), 8), "all_gather_async")
    check_equal(rs, np.full(8, n * (n - 1) // 2), "reduce_scatter_async")
    check_equal(a2a, np.concatenate([np.arange(8) + 8 * r + 100 * q for q in range(n)]),
                "all_to_all_async")
    if n % 2 == 0:
        check_equal(got, np.full(4, r ^ 1), "send/recv async")


def test_streams(comm):
    s1, s2 = comm.create_stream("grads"), comm.create_stream("params")
    check(s1.name == "grads" and s2.id != s1.id and not s1.is_default, f"{s1!r} {s2!r}")
    xs = [np.full(N, i + comm.rank, dtype=np.float64) for i in range(6)]
    works = [comm.all_reduce_async(x, stream=s1 if i % 2 else s2) for i, x in enumerate(xs)]
    comm.synchronize()
    check(all(w.test() for w in works), "synchronize waited for every stream")
    n = comm.size
    for i, x in enumerate(xs):
        check_equal(x, np.full(N, n * i + n * (n - 1) / 2), f"stream op {i}")
    expect_error(chorus.InvalidArgumentError, lambda: comm.all_reduce_async(xs[0], stream="s1"),
                 "stream")


def test_callbacks(comm):
    seen = []
    x = np.ones(N, dtype=np.float32)
    w = comm.all_reduce_async(x)
    # Runs with the GIL held: it may use numpy and touch Python objects.
    w.on_complete(lambda work: seen.append((work.op, float(np.sum(x)), work.state)))
    w.wait()
    deadline = time.monotonic() + 5
    while not seen and time.monotonic() < deadline:
        time.sleep(0.01)
    check(seen == [("all_reduce", float(N * comm.size), chorus.Work.State.DONE)], f"{seen}")
    late = []
    w.on_complete(lambda work: late.append(work.seq))  # already done: runs at once
    check(late == [w.seq], "a callback on a finished Work runs at once")
    unraisable = []
    old_hook = sys.unraisablehook
    sys.unraisablehook = lambda u: unraisable.append(str(u.exc_value))
    try:
        w2 = comm.barrier_async()
        w2.on_complete(lambda work: 1 / 0)
        w2.wait()
        time.sleep(0.1)
        comm.barrier()
    finally:
        sys.unraisablehook = old_hook
    check(any("division by zero" in u for u in unraisable), f"callback error reported: {unraisable}")


def test_buffers_kept_alive(comm):
    a = np.ones(N, dtype=np.float64)
    before = sys.getrefcount(a)
    w = comm.all_reduce_async(a)
    check(sys.getrefcount(a) > before, "the pending operation references its buffer")
    w.wait()
    check(sys.getrefcount(a) == before, "released once complete")
    out = np.zeros(N)
    # The send array and the Work are dropped at once; the operation still has them.
    comm.all_reduce_async(np.full(N, comm.rank + 1.0), out)
    gc.collect()
    comm.synchronize()
    n = comm.size
    check_equal(out, np.full(N, n * (n + 1) / 2), "result from a dropped temporary")


def test_wait_timeout(comm):
    if comm.size < 2 or comm.rank > 1:
        return
    buf = np.zeros(4, dtype=np.int32)
    if comm.rank == 0:
        w = comm.recv_async(buf, 1)
        check(w.wait(0.2) is False, "still pending after 0.2 s")
        check(not w.test() and w.state == chorus.Work.State.PENDING, "pending")
        check(w.wait(timeout=30) is True, "then done")
        check_equal(buf, np.arange(4, dtype=np.int32), "received")
    else:
        time.sleep(1.0)
        comm.send(np.arange(4, dtype=np.int32), 0)


def test_groups(comm):
    r, n = comm.rank, comm.size
    right, left = (r + 1) % n, (r - 1) % n
    got = np.zeros(1 << 20, dtype=np.float32)
    # Every rank sends first: only safe inside a group. The send buffer is a temporary.
    with comm.group():
        comm.send(np.full(1 << 20, r, dtype=np.float32), right)
        comm.recv(got, left)
    check_equal(got, np.full(1 << 20, left, dtype=np.float32), "group ring")
    a, b = np.ones(8), np.full(8, 2.0)
    comm.group_start()
    w1, w2 = comm.all_reduce_async(a), comm.all_reduce_async(b)
    expect_error(chorus.InvalidArgumentError, w1.wait, "group_end")  # would never return
    comm.group_end()
    check(w1.test() and w2.test(), "Works of a group are complete at its end")
    check_equal(a + b, np.full(8, 3.0 * n), "fused all_reduces")
    expect_error(chorus.InvalidArgumentError, comm.group_end, "group_start")


if __name__ == "__main__":
    main([test_work_basics, test_every_async_collective, test_streams, test_callbacks,
          test_buffers_kept_alive, test_wait_timeout, test_groups])
