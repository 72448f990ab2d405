"""Every collective of chorus.Communicator on numpy arrays of every dtype, in place and
out of place, against results computed with numpy from all ranks' inputs."""
import array
import json
import os

import numpy as np

import chorus
from harness import ALL_DTYPES, check, check_equal, from_bf16, main, make

COUNT = 37  # odd, so no algorithm divides it evenly


def values(rank, n, op="sum"):
    """Rank `rank`'s input (small positive integers: exact in every dtype and op)."""
    i = np.arange(n)
    if op == "prod":
        return (rank + i) % 2 + 1
    return (rank * 7 + i * 3) % 5 + 1


def reduce_expected(size, n, op, dtype, chorus_dtype):
    stack = np.stack([values(r, n, op) for r in range(size)]).astype(np.float64)
    result = {"sum": stack.sum(0), "prod": stack.prod(0), "min": stack.min(0),
              "max": stack.max(0), "avg": stack.sum(0) / size}[op]
    if op == "avg" and np.dtype(dtype).kind in "iu" and chorus_dtype is None:
        result = np.trunc(result)
    return make(result, dtype, chorus_dtype)


def test_transport_name(comm):
    # One host: shared memory, unless the run forces TCP.
    want = "tcp" if os.environ.get("CHORUS_TRANSPORT") == "tcp" else "shm"
    assert comm.transport_name == want, comm.transport_name


def test_all_reduce(comm):
    for dtype, cdt in ALL_DTYPES:
        for op in ["sum", "prod", "min", "max", "avg"]:
            expected = reduce_expected(comm.size, COUNT, op, dtype, cdt)
            send = make(values(comm.rank, COUNT, op), dtype, cdt)
            recv = np.zeros_like(send)
            out = comm.all_reduce(send, recv, op, dtype=cdt)
            check(out is recv, "all_reduce returns recv")
            check_equal(recv, expected, f"all_reduce {dtype} {cdt} {op} out of place")
            check_equal(send, make(values(comm.rank, COUNT, op), dtype, cdt), "send unchanged")
            enum_op = getattr(chorus.ReduceOp, op.upper())
            out = comm.all_reduce(send, op=enum_op, dtype=cdt)
            check(out is send, "in-place all_reduce returns send")
            check_equal(send, expected, f"all_reduce {dtype} {cdt} {op} in place")
        same = make(values(comm.rank, COUNT), dtype, cdt)
        comm.all_reduce(same, same, dtype=cdt)
        check_equal(same, reduce_expected(comm.size, COUNT, "sum", dtype, cdt), "recv is send")


def test_all_reduce_shapes_and_buffers(comm):
    n = comm.size
    big = np.full(300_000, comm.rank + 1, dtype=np.float32)  # > 1 MiB: a window algorithm on shm
    comm.all_reduce(big)
    check_equal(big, np.full(300_000, n * (n + 1) / 2, dtype=np.float32), "1.2 MB all_reduce")
    grid = np.full((3, 4), comm.rank, dtype=np.int64)
    comm.all_reduce(grid, op="max")
    check_equal(grid, np.full((3, 4), n - 1), "2-D all_reduce")
    empty = np.zeros(0, dtype=np.float64)
    comm.all_reduce(empty)
    check(empty.size == 0, "empty all_reduce")
    neg = np.full(5, -(comm.rank + 1), dtype=np.int32)
    comm.all_reduce(neg, op="avg")  # truncated toward zero, not floored
    check_equal(neg, np.full(5, int(-(n * (n + 1) / 2) / n), dtype=np.int32), "int avg truncates")
    ints = array.array("i", [comm.rank, 1, 2])
    comm.all_reduce(ints)
    check(list(ints) == [n * (n - 1) // 2, n, 2 * n], f"array.array all_reduce: {ints}")
    mv = memoryview(np.full(4, 2.0))
    out = np.zeros(4)
    comm.all_reduce(mv, memoryview(out), op="prod")
    check_equal(out, np.full(4, 2.0 ** n), "memoryview all_reduce")
    bf = make(np.full(6, 1.5), np.uint16, "bfloat16")
    comm.all_reduce(bf, dtype=chorus.DataType.BFLOAT16)
    check_equal(from_bf16(bf), np.full(6, 1.5 * n, dtype=np.float32), "bf16 via DataType")


def test_reduce(comm):
    root = comm.size - 1
    for dtype, cdt in ALL_DTYPES:
        for op in ["sum", "max"]:
            expected = reduce_expected(comm.size, COUNT, op, dtype, cdt)
            send = make(values(comm.rank, COUNT, op), dtype, cdt)
            recv = np.zeros_like(send) if comm.rank == root else None
            out = comm.reduce(send, recv, op, root=root, dtype=cdt)
            if comm.rank == root:
                check(out is recv, "reduce returns recv on root")
                check_equal(recv, expected, f"reduce {dtype} {cdt} {op}")
            else:
                check(out is None, "reduce returns None off root")
            original = send.copy()
            comm.reduce(send, op=op, root=root, dtype=cdt)
            check_equal(send, expected if comm.rank == root else original,
                        f"reduce in place {dtype} {cdt} {op}")


def test_broadcast(comm):
    root = 1 % comm.size
    for dtype, cdt in ALL_DTYPES:
        expected = make(values(root, COUNT), dtype, cdt)
        send = make(values(comm.rank, COUNT), dtype, cdt)
        recv = np.zeros_like(send)
        comm.broadcast(send, recv, root=root, dtype=cdt)
        check_equal(recv, expected, f"broadcast {dtype} {cdt}")
        comm.broadcast(send, root=root, dtype=cdt)
        check_equal(send, expected, f"broadcast in place {dtype} {cdt}")
        recv2 = np.zeros_like(send)
        comm.broadcast(expected if comm.rank == root else None, recv2, root=root, dtype=cdt)
        check_equal(recv2, expected, "broadcast with send=None off the root")
    raw = bytearray(b"chorus!!" if comm.rank == root else bytes(8))
    comm.broadcast(raw, root=root)
    check(raw == bytearray(b"chorus!!"), f"bytearray broadcast: {raw}")


def test_all_gather(comm):
    for dtype, cdt in ALL_DTYPES:
        expected = np.concatenate([make(values(r, COUNT), dtype, cdt) for r in range(comm.size)])
        send = make(values(comm.rank, COUNT), dtype, cdt)
        recv = np.zeros(COUNT * comm.size, dtype=dtype)
        comm.all_gather(send, recv, dtype=cdt)
        check_equal(recv, expected, f"all_gather {dtype} {cdt}")
        inplace = np.zeros(COUNT * comm.size, dtype=dtype)
        mine = inplace[comm.rank * COUNT:(comm.rank + 1) * COUNT]
        mine[:] = send
        comm.all_gather(mine, inplace, dtype=cdt)
        check_equal(inplace, expected, f"all_gather in place {dtype} {cdt}")


def test_reduce_scatter(comm):
    n, r = comm.size, comm.rank
    for dtype, cdt in ALL_DTYPES:
        for op in ["sum", "min"]:
            full = reduce_expected(n, COUNT * n, op, dtype, cdt)
            expected = full[r * COUNT:(r + 1) * COUNT]
            send = make(values(r, COUNT * n, op), dtype, cdt)
            recv = np.zeros(COUNT, dtype=dtype)
            comm.reduce_scatter(send, recv, op, dtype=cdt)
            check_equal(recv, expected, f"reduce_scatter {dtype} {cdt} {op}")
            block = send[r * COUNT:(r + 1) * COUNT]
            comm.reduce_scatter(send, block, op, dtype=cdt)
            check_equal(block, expected, f"reduce_scatter in place {dtype} {cdt} {op}")


def test_all_to_all(comm):
    n, r = comm.size, comm.rank
    for dtype, cdt in ALL_DTYPES:
        data = [make(values(q, COUNT * n), dtype, cdt) for q in range(n)]
        expected = np.concatenate([data[q][r * COUNT:(r + 1) * COUNT] for q in range(n)])
        recv = np.zeros(COUNT * n, dtype=dtype)
        comm.all_to_all(data[r], recv, dtype=cdt)
        check_equal(recv, expected, f"all_to_all {dtype} {cdt}")
        comm.all_to_all(data[r], dtype=cdt)
        check_equal(data[r], expected, f"all_to_all in place {dtype} {cdt}")


def a2av_count(p, q):
    return (p + 2 * q) % 3  # includes zero-length blocks


def a2av_block(p, q, dtype):
    return (p * 16 + q * 4 + np.arange(a2av_count(p, q)) % 4).astype(dtype)


def test_all_to_all_v(comm):
    n, r = comm.size, comm.rank
    for dtype in [np.float32, np.int8, np.uint64]:
        send_counts = [a2av_count(r, q) for q in range(n)]
        recv_counts = [a2av_count(q, r) for q in range(n)]
        send = np.concatenate([a2av_block(r, q, dtype) for q in range(n)])
        recv = np.zeros(sum(recv_counts), dtype=dtype)
        comm.all_to_all_v(send, send_counts, recv, recv_counts)
        expected = np.concatenate([a2av_block(q, r, dtype) for q in range(n)])
        check_equal(recv, expected, f"all_to_all_v packed {dtype}")
        # Explicit displacements with a gap of 2 elements before every receive block.
        recv_displs = np.cumsum([0] + [c + 2 for c in recv_counts])[:-1] + 2
        gapped = np.full(int(recv_displs[-1]) + recv_counts[-1], 99, dtype=dtype)
        comm.all_to_all_v(send, np.array(send_counts), gapped, recv_counts,
                          send_displs=np.cumsum([0] + send_counts)[:-1], recv_displs=recv_displs)
        for q in range(n):
            d = int(recv_displs[q])
            check_equal(gapped[d:d + recv_counts[q]], a2av_block(q, r, dtype), f"block from {q}")
            check_equal(gapped[d - 2:d], np.full(2, 99, dtype=dtype), "gap untouched")


def test_gather_scatter(comm):
    n, r = comm.size, comm.rank
    root = n - 1
    for dtype, cdt in ALL_DTYPES:
        send = make(values(r, COUNT), dtype, cdt)
        recv = np.zeros(COUNT * n, dtype=dtype) if r == root else None
        out = comm.gather(send, recv, root=root, dtype=cdt)
        if r == root:
            check(out is recv, "gather returns recv on root")
            expected = np.concatenate([make(values(q, COUNT), dtype, cdt) for q in range(n)])
            check_equal(recv, expected, f"gather {dtype} {cdt}")
        full = make(values(0, COUNT * n), dtype, cdt)
        part = np.zeros(COUNT, dtype=dtype)
        comm.scatter(full if r == 0 else None, part, root=0, dtype=cdt)
        check_equal(part, full[r * COUNT:(r + 1) * COUNT], f"scatter {dtype} {cdt}")


def test_barrier_agree(comm):
    comm.barrier()
    check(comm.agree(False) is False, "agree(False) everywhere is False")
    check(comm.agree(comm.rank == comm.size - 1) is True, "agree with one True is True")
    report = comm.health_check(5)
    check(report.ok and bool(report), f"health_check: {report}")
    check(report.ranks_responding == comm.size, "every rank responded")
    record = comm.flight_record()
    check(record.startswith("chorus flight recorder v1") and "scatter" in record, record)
    doc = json.loads(comm.flight_record_json())
    check(doc["schema"] == "chorus.flight_record" and doc["rank"] == comm.rank, "JSON record")
    check(any(e["op"] == "scatter" for e in doc["entries"]), "JSON entries")


if __name__ == "__main__":
    main([test_transport_name, test_all_reduce, test_all_reduce_shapes_and_buffers, test_reduce, test_broadcast,
          test_all_gather, test_reduce_scatter, test_all_to_all, test_all_to_all_v,
          test_gather_scatter, test_barrier_agree])
