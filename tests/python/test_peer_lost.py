"""A rank that leaves mid-loop (sys.exit, or os._exit without closing anything): every
survivor raises chorus.PeerLostError naming it, promptly, and the survivors go on with
shrink(). Usage: test_peer_lost.py exit|abrupt|async (async: the survivors see it in
Work.wait() of all_reduce_async on a created stream)."""
import os
import sys
import time

import numpy as np

import chorus
from harness import check, check_equal, main

MODE = sys.argv[1] if len(sys.argv) > 1 else "exit"
LEAVE_AT = 5


def test_survivors_raise_peer_lost(comm):
    leaver = comm.size - 1
    x = np.ones(1024, dtype=np.float32)
    stream = comm.create_stream("loop") if MODE == "async" else None
    for step in range(1000):
        if comm.rank == leaver and step == LEAVE_AT:
            print(f"rank {comm.rank}: leaving at step {step} ({MODE})", flush=True)
            if MODE in ("abrupt", "async"):
                os._exit(0)
            sys.exit(0)  # atexit closes the communicator
        try:
            if stream is None:
                comm.all_reduce(x)
            else:
                w = comm.all_reduce_async(x, stream=stream)
                w.wait()
            left = time.monotonic()
        except chorus.PeerLostError as e:
            elapsed = time.monotonic() - left
            check(step == LEAVE_AT, f"failed at step {step}, expected {LEAVE_AT}")
            check(e.peer_rank == leaver, f"peer_rank {e.peer_rank}, expected {leaver}: {e}")
            check(f"rank {leaver}" in e.message, f"message names rank {leaver}: {e.message}")
            check(e.code == chorus.ErrorCode.PEER_LOST, "code PEER_LOST")
            check(elapsed < 5, f"survivor failed {elapsed:.2f} s after the last good step")
            if stream is not None:
                check(w.state == chorus.Work.State.FAILED, f"the Work failed: {w!r}")
                check(w.code == chorus.ErrorCode.PEER_LOST and w.message == e.message, "code")
            break
    else:
        raise AssertionError("no PeerLostError")
    later = chorus.Error
    try:
        comm.barrier()
    except chorus.Error as e:  # the communicator is unusable now
        later = type(e)
    check(later is chorus.PeerLostError, f"later calls raise PeerLostError, got {later}")
    survivors = comm.shrink()
    check(survivors.size == comm.size - 1, f"shrink: {survivors.size} ranks")
    y = np.full(4, survivors.rank + 1, dtype=np.int64)
    survivors.all_reduce(y)
    n = survivors.size
    check_equal(y, np.full(4, n * (n + 1) // 2), "all_reduce on the shrunk communicator")
    survivors.close()


if __name__ == "__main__":
    main([test_survivors_raise_peer_lost])
