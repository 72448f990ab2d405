"""send/recv: a ring in both directions at several sizes and dtypes; a size mismatch
raises chorus.DesyncError on both ranks of the pair."""
import numpy as np

import chorus
from harness import check, check_equal, expect_error, main


def ring(comm, n_elems, dtype, step):
    r, n = comm.rank, comm.size
    right, left = (r + step) % n, (r - step) % n
    out = (np.arange(n_elems) + r * 1000).astype(dtype)
    got = np.zeros(n_elems, dtype=dtype)
    # Even ranks send first, odd ranks receive first: no rank waits on a rank that waits.
    if r % 2 == 0:
        comm.send(out, right)
        check(comm.recv(got, left) is got, "recv returns buf")
    else:
        comm.recv(got, left)
        comm.send(out, right)
    check_equal(got, (np.arange(n_elems) + left * 1000).astype(dtype), f"ring {n_elems} {dtype}")


def test_ring(comm):
    if comm.size % 2 == 1:
        return
    for n_elems in [1, 1000, 1 << 20]:  # the largest is 4-8 MiB: no eager path
        for dtype in [np.float32, np.int64, np.uint8]:
            ring(comm, n_elems, dtype, +1)
            ring(comm, n_elems, dtype, -1)


def test_bf16_p2p(comm):
    if comm.rank < 2:
        buf = np.arange(8, dtype=np.uint16) if comm.rank == 0 else np.zeros(8, np.uint16)
        if comm.rank == 0:
            comm.send(buf, 1, dtype="bfloat16")
        else:
            comm.recv(buf, 0, dtype="bfloat16")
            check_equal(buf, np.arange(8, dtype=np.uint16), "bf16 recv")


def test_size_mismatch_is_desync(comm):
    # On a sub-communicator of ranks 0 and 1, so the failure stays there.
    pair = comm.new_group([0, 1])
    if pair is not None:
        if pair.rank == 0:
            pair.send(np.ones(4, np.float32), 1)
            expect_error(chorus.DesyncError, pair.barrier)
        else:
            e = expect_error(chorus.DesyncError, lambda: pair.recv(np.ones(8, np.float32), 0))
            check(e.peer_rank == 0, f"the desync names rank 0: {e.peer_rank} {e.message}")
        pair.close()
    x = np.ones(2, np.int32)
    comm.all_reduce(x)
    check_equal(x, np.full(2, comm.size, np.int32), "the parent is unaffected")


if __name__ == "__main__":
    main([test_ring, test_bf16_p2p, test_size_mismatch_is_desync])
