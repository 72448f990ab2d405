"""Registered memory from Python: chorus.mem_alloc / chorus.registered_array give arrays
that every collective accepts, with the results of heap arrays; the estimate prices single
copy lower once every rank's buffers were registered (run with CHORUS_PLACEMENT=1, so that
only registration moves it); bad sizes raise InvalidArgumentError naming nbytes."""
import gc

import numpy as np

import chorus
from harness import check, expect_error, main

N = 70001  # float32 per block: several pages and a tail


def values(rank, n, salt=0):
    return ((np.arange(n) * 7 + rank * 3 + salt) % 11).astype(np.float32)


def test_arrays(comm):
    n, r = comm.size, comm.rank
    a = chorus.registered_array(N)
    check(a.dtype == np.float32 and a.shape == (N,) and a.flags.writeable, "array of N float32")
    check(not a.any(), "zeroed")
    a[:] = values(r, N)
    out = chorus.registered_array((n, N))
    comm.all_gather(a, out)
    for q in range(n):
        check(np.array_equal(out[q], values(q, N)), f"all_gather block {q}")
    x = chorus.registered_array(n * N)
    x[:] = values(r, n * N, salt=1)
    y = chorus.registered_array(n * N)
    comm.all_to_all(x, y)
    for q in range(n):
        check(np.array_equal(y[q * N:(q + 1) * N], values(q, n * N, salt=1)[r * N:(r + 1) * N]),
              f"all_to_all block {q}")
    rs = chorus.registered_array(N)
    comm.reduce_scatter(x, rs)
    want = sum(values(q, n * N, salt=1) for q in range(n))
    check(np.array_equal(rs, want[r * N:(r + 1) * N]), "reduce_scatter")
    comm.all_reduce(x)
    check(np.array_equal(x, want), "all_reduce")
    b = chorus.registered_array(N, dtype=np.int64)
    if r == 0:
        b[:] = np.arange(N)
    comm.broadcast(b, root=0)
    check(np.array_equal(b, np.arange(N)), "broadcast int64")


def single_copy_us(comm):
    return dict(comm.estimate("all_gather", N)["candidates"])["single_copy"]


def gathers(comm, registered):
    make = chorus.registered_array if registered else (lambda shape: np.zeros(shape, np.float32))
    a, out = make(N), make((comm.size, N))
    for _ in range(20):
        comm.all_gather(a, out)
    return single_copy_us(comm)


def test_pricing_follows_registration(comm):
    heap = gathers(comm, False)
    mapped = gathers(comm, True)
    again = gathers(comm, False)
    check(mapped < heap, f"registered: single copy {mapped} us, heap {heap} us")
    check(again == heap, f"heap again: {again} us, before {heap} us")


def test_lifetime_and_errors(comm):
    buf = chorus.mem_alloc(4096)
    check(buf.nbytes == 4096 and len(buf) == 4096, "nbytes")
    view = np.frombuffer(buf, dtype=np.uint8)
    del buf
    gc.collect()
    view[:] = 7  # the array keeps the memory alive
    check(int(view.sum()) == 7 * 4096, "view outlives the name")
    expect_error(chorus.InvalidArgumentError, lambda: chorus.mem_alloc(0), "nbytes")
    expect_error(chorus.InvalidArgumentError, lambda: chorus.mem_alloc(-5), "nbytes")
    check(chorus.registered_array(0).size == 0, "empty array")


if __name__ == "__main__":
    main([test_arrays, test_pricing_follows_registration, test_lifetime_and_errors])
