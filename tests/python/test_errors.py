"""Bad arguments raise chorus.InvalidArgumentError naming the argument (before anything
reaches the wire, so the communicator stays usable); the exception classes mirror
chorus::ErrorCode; a deadline raises chorus.TimeoutError on every rank."""
import builtins
import time

import numpy as np

import chorus
from harness import check, check_equal, expect_error, main

Invalid = chorus.InvalidArgumentError


def test_error_classes(comm):
    codes = {
        chorus.InvalidArgumentError: chorus.ErrorCode.INVALID_ARGUMENT,
        chorus.TimeoutError: chorus.ErrorCode.TIMEOUT,
        chorus.PeerLostError: chorus.ErrorCode.PEER_LOST,
        chorus.DesyncError: chorus.ErrorCode.DESYNC,
        chorus.AbortedError: chorus.ErrorCode.ABORTED,
        chorus.IoError: chorus.ErrorCode.IO,
        chorus.NotSupportedError: chorus.ErrorCode.NOT_SUPPORTED,
        chorus.InternalError: chorus.ErrorCode.INTERNAL,
    }
    for cls, code in codes.items():
        check(issubclass(cls, chorus.Error), f"{cls.__name__} derives from chorus.Error")
        check(cls.code == code, f"{cls.__name__}.code is {code}")
        check(cls.__module__ == "chorus", f"{cls.__name__} lives in module chorus")
    check(issubclass(chorus.Error, Exception), "chorus.Error is an Exception")
    check(chorus.TimeoutError is not builtins.TimeoutError, "builtins not replaced")
    check(issubclass(chorus.TimeoutError, builtins.TimeoutError), "also a builtin TimeoutError")
    check(issubclass(chorus.InvalidArgumentError, ValueError), "also a ValueError")
    ns = {}
    exec("from chorus import *", ns)
    check("TimeoutError" not in ns, "star import does not shadow TimeoutError")


def test_buffer_errors(comm):
    x = np.ones(8, dtype=np.float32)
    e = expect_error(Invalid, lambda: comm.all_reduce(x[::2]), "send", "C-contiguous")
    check(e.code == chorus.ErrorCode.INVALID_ARGUMENT and e.peer_rank == -1 and e.seq == -1,
          "attributes of a local error")
    expect_error(Invalid, lambda: comm.all_reduce(x, np.ones((4, 4), np.float32)[:, 0]),
                 "recv", "C-contiguous")
    ro = np.ones(8, dtype=np.float32)
    ro.flags.writeable = False
    expect_error(Invalid, lambda: comm.all_reduce(ro), "send", "read-only")
    expect_error(Invalid, lambda: comm.all_reduce(x, ro), "recv", "read-only")
    expect_error(Invalid, lambda: comm.all_reduce(bytes(8)), "send", "read-only")
    expect_error(Invalid, lambda: comm.all_reduce(x, np.ones(8)), "recv", "float64", "send")
    expect_error(Invalid, lambda: comm.all_reduce(x, np.ones(7, np.float32)), "recv", "7", "8")
    expect_error(Invalid, lambda: comm.all_reduce(np.ones(3, np.int16)), "send", "int16")
    expect_error(Invalid, lambda: comm.all_reduce(np.ones(3, np.uint16)), "send", "bfloat16")
    expect_error(Invalid, lambda: comm.all_reduce(np.ones(3, bool)), "send")
    expect_error(Invalid, lambda: comm.all_reduce(np.ones(3, np.complex64)), "send")
    expect_error(Invalid, lambda: comm.all_reduce(np.ones(3, ">f4")), "send", "byte order")
    expect_error(Invalid, lambda: comm.all_reduce(x, dtype="bfloat16"), "send", "dtype=bfloat16")
    expect_error(Invalid, lambda: comm.all_reduce(x, dtype="complex"), "dtype", "complex")
    expect_error(Invalid, lambda: comm.all_reduce(x, dtype=3), "dtype")
    expect_error(Invalid, lambda: comm.all_reduce([1.0, 2.0]), "send", "list")
    expect_error(Invalid, lambda: comm.all_reduce(None), "send", "None")
    nine = np.ones(9, dtype=np.float32)
    expect_error(Invalid, lambda: comm.all_reduce(nine[:8], nine[1:]), "recv", "overlap")


def test_argument_errors(comm):
    n = comm.size
    x = np.ones(8, dtype=np.float32)
    expect_error(Invalid, lambda: comm.all_reduce(x, op="mean"), "op", "mean")
    expect_error(Invalid, lambda: comm.all_reduce(x, op=1), "op")
    expect_error(Invalid, lambda: comm.reduce(x, root=n), "root", str(n))
    expect_error(Invalid, lambda: comm.broadcast(x, root=-1), "root", "-1")
    expect_error(Invalid, lambda: comm.gather(x, np.ones(8 * n - 1, np.float32), root=comm.rank),
                 "recv")
    expect_error(Invalid, lambda: comm.gather(x, None, root=comm.rank), "recv", "root")
    expect_error(Invalid, lambda: comm.scatter(None, x, root=comm.rank), "send", "root")
    expect_error(Invalid, lambda: comm.all_gather(x, np.ones(8, np.float32)), "recv")
    big = np.ones(8 * n, dtype=np.float32)
    expect_error(Invalid, lambda: comm.all_gather(big[1:9], big), "overlap")
    expect_error(Invalid, lambda: comm.reduce_scatter(x, np.ones(8, np.float32)), "send")
    expect_error(Invalid, lambda: comm.all_to_all(np.ones(4 * n + 1, np.float32)), "send",
                 "multiple")
    counts = [1] * n
    expect_error(Invalid, lambda: comm.all_to_all_v(x, counts[:-1], big, counts),
                 "send_counts", "entries")
    expect_error(Invalid, lambda: comm.all_to_all_v(x, [9] + counts[1:], big, counts),
                 "send", "send_counts[0]=9")
    expect_error(Invalid, lambda: comm.all_to_all_v(x, [-1] + counts[1:], big, counts),
                 "send_counts[0]", "negative")
    expect_error(Invalid, lambda: comm.all_to_all_v(x, counts, big, counts,
                                                    recv_displs=[8 * n] * n), "recv_displs")
    expect_error(Invalid, lambda: comm.all_to_all_v(big, counts, big, counts), "overlap")
    expect_error(Invalid, lambda: comm.send(x, comm.rank), "peer", "self")
    expect_error(Invalid, lambda: comm.recv(x, n), "peer")
    expect_error(Invalid, lambda: comm.set_timeout(-1), "timeout")
    expect_error(Invalid, lambda: comm.set_timeout("soon"), "timeout")
    expect_error(Invalid, lambda: comm.health_check(-2), "timeout")
    expect_error(Invalid, lambda: chorus.Bucketer(comm, bucket_bytes=-1), "bucket_bytes")
    expect_error(Invalid, lambda: chorus.Bucketer(comm, compression="zip"), "compression")
    # None of the above reached the wire: the communicator still works.
    y = np.full(3, comm.rank, dtype=np.int32)
    comm.all_reduce(y)
    check_equal(y, np.full(3, n * (n - 1) // 2, dtype=np.int32), "usable after bad calls")


def test_timeouts(comm):
    check(comm.timeout > 0, "a configured timeout")
    comm.set_timeout(2.5)
    check(comm.timeout == 2.5, f"set_timeout(2.5): {comm.timeout}")
    with comm.scoped_timeout(0.75):
        check(comm.timeout == 0.75, "scoped_timeout")
    check(comm.timeout == 2.5, "scoped_timeout restores")
    comm.set_timeout(0)
    comm.set_timeout(1.0)
    # Rank 0 stalls past the 1 s deadline: every rank raises chorus.TimeoutError.
    if comm.rank == 0:
        time.sleep(2.5)
    start = time.monotonic()
    e = expect_error(chorus.TimeoutError, lambda: comm.all_reduce(np.ones(4)), "all_reduce")
    check(isinstance(e, builtins.TimeoutError), "caught as the builtin TimeoutError too")
    check(e.seq > 0, f"the error carries the sequence number: {e.seq}")
    check(time.monotonic() - start < 10, "bounded")
    comm.close()
    expect_error(Invalid, lambda: comm.rank, "closed")


if __name__ == "__main__":
    main([test_error_classes, test_buffer_errors, test_argument_errors, test_timeouts])
