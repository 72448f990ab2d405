"""chorus.Bucketer on numpy arrays: several buckets of mixed dtypes over iterations with
arrays marked ready in reverse order, averaging, fp16/bf16 wire compression, misuse."""
import sys

import numpy as np

import chorus
from harness import check, check_equal, expect_error, main

SIZES = [1000, 3, 5000, 17, 2000]


def fill(arrays, rank, it):
    for i, a in enumerate(arrays):
        a[:] = (np.arange(a.size) % 7 + rank + i + it).astype(a.dtype)


def expected(a, i, it, n, op):
    base = np.arange(a.size) % 7 + i + it
    total = sum(base + q for q in range(n))
    return (total / n if op == "avg" else total).astype(a.dtype)


def run(comm, op, compression, iterations=3):
    op_name = op if isinstance(op, str) else op.name.lower()
    arrays = [np.zeros(s, dtype=np.float32) for s in SIZES]
    arrays += [np.zeros(100, dtype=np.float64), np.zeros(50, dtype=np.int32)]
    b = chorus.Bucketer(comm, bucket_bytes=16 << 10, op=op, compression=compression)
    refs = sys.getrefcount(arrays[0])
    for a in arrays:
        b.add(a)
    check(sys.getrefcount(arrays[0]) > refs, "the Bucketer references its arrays")
    check(b.num_tensors == len(arrays), "num_tensors")
    n = comm.size
    for it in range(iterations):
        fill(arrays, comm.rank, it)
        for i in reversed(range(len(arrays))):
            b.mark_ready(i)
        b.finish()
        if it == 0:
            check(b.num_buckets >= 3, f"several buckets: {b.num_buckets}")
        for i, a in enumerate(arrays):
            # int32 avg truncates; the values here divide evenly or are float.
            check_equal(a, expected(a, i, it, n, op_name), f"{op} {compression} it {it} array {i}")
    return b, arrays


def test_sum_and_avg(comm):
    run(comm, "sum", "none")
    run(comm, chorus.ReduceOp.AVG if comm.size in (1, 2, 4) else "sum", "none")


def test_compression(comm):
    # Small integers survive the 16-bit round trip exactly.
    run(comm, "sum", "fp16")
    run(comm, "sum", chorus.Compression.BF16)


def test_misuse(comm):
    b, arrays = run(comm, "sum", "none", iterations=1)
    Invalid = chorus.InvalidArgumentError
    expect_error(Invalid, lambda: b.add(np.zeros(4, np.float32)), "add", "mark_ready")
    b.mark_ready(0)
    expect_error(Invalid, lambda: b.mark_ready(0), "tensor 0", "already")
    expect_error(Invalid, lambda: b.mark_ready(99), "index 99")
    b.finish()
    fresh = chorus.Bucketer(comm)
    expect_error(Invalid, lambda: fresh.add(np.zeros(8, np.float32)[::2]), "array", "contiguous")
    ro = np.zeros(4, np.float32)
    ro.flags.writeable = False
    expect_error(Invalid, lambda: fresh.add(ro), "array", "read-only")
    expect_error(Invalid, lambda: fresh.add(np.zeros(0, np.float32)), "array", "empty")


if __name__ == "__main__":
    main([test_sum_and_avg, test_compression, test_misuse])
