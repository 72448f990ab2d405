"""Blocking calls release the GIL: a Python thread keeps running while another blocks
in a collective, and can abort() or close() the communicator to unblock it."""
import threading
import time

import numpy as np

import chorus
from harness import check, expect_error, main


def counting_while(fn):
    """Runs fn() while a thread counts; returns (count, seconds)."""
    stop = threading.Event()
    count = [0]

    def spin():
        while not stop.is_set():
            count[0] += 1

    t = threading.Thread(target=spin)
    t.start()
    start = time.monotonic()
    try:
        fn()
    finally:
        stop.set()
        t.join()
    return count[0], time.monotonic() - start


def test_thread_runs_during_collective(comm):
    x = np.ones(16)
    if comm.rank == 0:
        time.sleep(1.0)  # the others block in all_reduce meanwhile
        comm.all_reduce(x)
        return
    count, seconds = counting_while(lambda: comm.all_reduce(x))
    check(seconds > 0.5, f"all_reduce blocked for {seconds:.2f} s")
    # With the GIL held by the blocked call the thread would not run at all.
    check(count > 10000, f"the counting thread ran {count} times in {seconds:.2f} s")
    check(x[0] == comm.size, "result")


def test_abort_from_thread(comm):
    x = np.ones(16)
    if comm.rank == 0:
        time.sleep(1.0)  # rank 1 aborts meanwhile; we hear about it
        expect_error(chorus.AbortedError, lambda: comm.all_reduce(x), "abort")
        return
    if comm.rank == 1:
        threading.Timer(0.3, comm.abort).start()
    start = time.monotonic()
    expect_error(chorus.AbortedError, lambda: comm.all_reduce(x))
    check(time.monotonic() - start < 3, "abort unblocked the call promptly")


def test_close_from_thread(comm):
    fresh = comm.shrink()  # every rank alive: a new communicator of the same size
    check(fresh.size == comm.size, "shrink with nobody lost keeps the size")
    x = np.ones(16)
    rank = fresh.rank
    if rank == 0:
        time.sleep(1.0)
        try:
            fresh.all_reduce(x)
        except chorus.Error:
            pass  # the closing rank's departure (aborted or peer lost)
        fresh.close()
        return
    if rank == 1:
        threading.Timer(0.3, fresh.close).start()
    error = expect_error(chorus.Error, lambda: fresh.all_reduce(x))
    if rank == 1:
        check(isinstance(error, chorus.AbortedError), f"close() aborted the call: {error!r}")
        time.sleep(0.5)
        check(fresh.closed, "closed by the thread")
    fresh.close()
    fresh.abort()  # a no-op once closed


if __name__ == "__main__":
    main([test_thread_runs_during_collective, test_abort_from_thread, test_close_from_thread])
