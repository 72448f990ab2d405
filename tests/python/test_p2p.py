"""send/recv: a ring in both directions at several sizes and dtypes; a size mismatch
raises chorus.DesyncError on both ranks of the pair; asynchronous receives issued before
the sends complete (they do not hold the sends back); tags are separate sequences; receives from any source (recv_any, recv_any_async) get
every sender's messages once and in order."""
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


def test_recv_async_before_send_async(comm):
    # Every rank receives from every peer before sending to it, all on the default stream
    # (4 MiB messages: the sends wait for the receivers). Before the fix each rank's stream
    # sat in its first receive and the sends never left.
    r, n = comm.rank, comm.size
    n_elems = 1 << 20
    ins = {p: np.full(n_elems, -1, np.int32) for p in range(n) if p != r}
    works = [comm.recv_async(ins[p], p) for p in ins]
    outs = {p: np.full(n_elems, r * 100 + p, np.int32) for p in ins}
    works += [comm.send_async(outs[p], p) for p in outs]
    for w in works:
        w.wait()
    for p, got in ins.items():
        check_equal(got, np.full(n_elems, p * 100 + r, np.int32), f"from rank {p}")


def test_tags(comm):
    # Rank 0 sends tags 3, 0 and 9; rank 1 receives 9, 0 and 3, each its own message.
    if comm.rank == 0:
        outs = [np.full(1 << 18, 1000 + t, np.int32) for t in (3, 0, 9)]
        works = [comm.send_async(o, 1, tag=t) for o, t in zip(outs, (3, 0, 9))]
        for w in works:
            w.wait()
    elif comm.rank == 1:
        for t in (9, 0, 3):
            got = comm.recv(np.zeros(1 << 18, np.int32), 0, tag=t)
            check_equal(got, np.full(1 << 18, 1000 + t, np.int32), f"tag {t}")
    e = expect_error(chorus.InvalidArgumentError,
                     lambda: comm.send(np.ones(1, np.int32), (comm.rank + 1) % comm.size, tag=-1))
    check("tag" in e.message, f"the error names the tag: {e.message}")
    comm.barrier()


def test_recv_any(comm):
    # Every rank but 0 sends 4 messages to rank 0 (value rank * 100 + i), which receives
    # them from any source, blocking and async alternately: each once, each sender's in order.
    r, n = comm.rank, comm.size
    if r == 0:
        nxt = {p: 0 for p in range(1, n)}
        for k in range(4 * (n - 1)):
            got = np.full(1000, -1, np.int64)
            if k % 2 == 0:
                src = comm.recv_any(got)
            else:
                w = comm.recv_any_async(got)
                w.wait()
                src = w.source
            check(src in nxt, f"source {src}")
            check_equal(got, np.full(1000, src * 100 + nxt[src], np.int64), f"message {k}")
            nxt[src] += 1
        check(all(v == 4 for v in nxt.values()), f"received per sender: {nxt}")
    else:
        for i in range(4):
            comm.send(np.full(1000, r * 100 + i, np.int64), 0)
    comm.barrier()


if __name__ == "__main__":
    main([test_ring, test_bf16_p2p, test_recv_async_before_send_async, test_tags,
          test_recv_any, test_size_mismatch_is_desync])
