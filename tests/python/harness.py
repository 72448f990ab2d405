"""Shared helpers of the Python tests. Each test script runs on every rank under
chorus-run (tests/python/CMakeLists.txt): it calls main(cases), which builds the
communicator from the environment, runs every case in order on every rank and exits
non-zero with the failing case's traceback on the first failure."""
import sys
import time
import traceback

import numpy as np

import chorus

# numpy dtypes Chorus infers from the buffer, plus bfloat16 (uint16 arrays + dtype=).
NUMPY_DTYPES = [np.float16, np.float32, np.float64, np.int8, np.uint8, np.int32,
                np.uint32, np.int64, np.uint64]
ALL_DTYPES = [(np.dtype(t), None) for t in NUMPY_DTYPES] + [(np.dtype(np.uint16), "bfloat16")]


def to_bf16(values):
    """float values -> bfloat16 bit patterns (uint16); exact for the small integers used."""
    f = np.asarray(values, dtype=np.float32)
    return (f.view(np.uint32) >> 16).astype(np.uint16)


def from_bf16(bits):
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def make(values, dtype, chorus_dtype):
    """An array of `values` (small integers) in `dtype` (bf16 bits when chorus_dtype)."""
    if chorus_dtype == "bfloat16":
        return to_bf16(values)
    return np.asarray(values).astype(dtype)


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def check_equal(actual, expected, what):
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    if actual.shape != expected.shape or not np.array_equal(actual, expected):
        raise AssertionError(f"{what}:\n  got      {actual!r}\n  expected {expected!r}")


def expect_error(cls, fn, *words):
    """fn() must raise `cls` whose message contains every word; returns the error."""
    try:
        fn()
    except cls as e:
        for w in words:
            check(w in e.message, f"{cls.__name__} message {e.message!r} lacks {w!r}")
        check(str(e) == e.message, "str(error) is its message")
        return e
    except Exception as e:  # noqa: BLE001 - reported as a test failure
        raise AssertionError(f"expected {cls.__name__} ({words}), got {type(e).__name__}: {e}")
    raise AssertionError(f"expected {cls.__name__} ({words}), nothing was raised")


def main(cases, comm=None, **init_args):
    comm = comm or chorus.Communicator.init_from_env(**init_args)
    name = "?"
    rank = comm.rank
    try:
        for case in cases:
            name = case.__name__
            start = time.monotonic()
            case(comm)
            print(f"rank {rank}: {name} ok ({time.monotonic() - start:.2f} s)", flush=True)
    except SystemExit:  # a rank leaving on purpose (sys.exit)
        raise
    except BaseException:  # noqa: BLE001 - any failure ends this rank with its traceback
        print(f"rank {rank}: {name} FAILED", flush=True)
        traceback.print_exc()
        sys.stdout.flush()
        sys.stderr.flush()
        import os
        os._exit(1)
    if not comm.closed:
        comm.close()
