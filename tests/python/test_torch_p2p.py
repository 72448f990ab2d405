"""Backend "chorus": point-to-point order and tags, torch's coalescing, and the operations
added for PyTorch's own test suite (all_gather_coalesced, sparse all_reduce,
monitored_barrier, group sequence numbers), each against gloo's result where gloo has
one.

t_irecv_before_isend is the hang of issue 14: every rank receives from its peer before
sending to it; before the fix the send queued behind the receive on both ranks and both
waited until the group's timeout (20 s here; the case must finish in 5 s)."""
import datetime
import time

import torch
import torch.distributed as dist
import torch.distributed.distributed_c10d as c10d

from torch_harness import check, check_tensor, expect_error, init, main


def peers(rank, size):
    return [p for p in range(size) if p != rank]


def t_irecv_before_isend(rank, size, gloo):
    for n in (8, 1 << 20):  # eager and rendezvous sizes
        start = time.monotonic()
        got = {p: torch.full((n,), -1.0) for p in peers(rank, size)}
        reqs = [dist.irecv(got[p], p) for p in got]
        reqs += [dist.isend(torch.full((n,), float(rank * 10 + p)), p) for p in got]
        for r in reqs:
            r.wait()
        took = time.monotonic() - start
        check(took < 5.0, f"irecv before isend took {took:.1f} s")
        for p, t in got.items():
            check_tensor(t, torch.full((n,), float(p * 10 + rank)), f"from {p}, {n} elements")


def t_batch_isend_irecv(rank, size, gloo):
    # Receives listed first, every rank with every peer, tags as in torch's suite.
    ops, got = [], {}
    for p in peers(rank, size):
        got[p] = torch.full((5,), -1, dtype=torch.int64)
        ops.append(dist.P2POp(dist.irecv, got[p], p, tag=p))
        ops.append(dist.P2POp(dist.isend, torch.full((5,), rank * 100 + p), p, tag=rank))
    for req in dist.batch_isend_irecv(ops):
        req.wait()
    for p, t in got.items():
        check_tensor(t, torch.full((5,), p * 100 + rank), f"batch from {p}")


def t_tags(rank, size, gloo):
    # Rank 0 sends tags 4, 0, 9 to rank 1, which receives 9, 0, 4: each its own message.
    if rank == 0:
        reqs = [dist.isend(torch.full((1000,), float(t)), 1, tag=t) for t in (4, 0, 9)]
        for r in reqs:
            r.wait()
    elif rank == 1:
        for t in (9, 0, 4):
            got = torch.zeros(1000)
            dist.recv(got, 0, tag=t)
            check_tensor(got, torch.full((1000,), float(t)), f"tag {t}")
    dist.barrier()


def t_all_gather_coalesced(rank, size, gloo):
    inputs = [torch.arange(k * k, dtype=torch.float32).reshape(k, k) + rank for k in (1, 2, 3)]
    inputs.append(torch.zeros(0))
    mine = [[torch.empty_like(t) for t in inputs] for _ in range(size)]
    ref = [[torch.empty_like(t) for t in inputs] for _ in range(size)]
    dist.all_gather_coalesced(mine, inputs)
    dist.all_gather_coalesced(ref, inputs, group=gloo)
    for r in range(size):
        for a, b in zip(mine[r], ref[r]):
            check_tensor(a, b, f"all_gather_coalesced block of rank {r}")


def t_sparse_all_reduce(rank, size, gloo):
    # Overlapping and distinct indices, a dense dimension, one rank with no entries.
    idx = torch.tensor([[0, rank % 3, 4], [1, 1, rank % 2]])
    val = torch.arange(6, dtype=torch.float32).reshape(3, 2) + rank
    if rank == size - 1 and size > 2:
        idx, val = idx[:, :0], val[:0]
    mine = torch.sparse_coo_tensor(idx, val, (5, 2, 2))
    ref = mine.clone()
    dist.all_reduce(mine)
    dist.all_reduce(ref, group=gloo)
    check_tensor(mine.coalesce().to_dense(), ref.coalesce().to_dense(), "sparse all_reduce")
    check(mine.is_sparse, "the result stays sparse")
    expect_error(lambda: dist.all_reduce(mine.clone(), op=dist.ReduceOp.MAX), "SUM only")


def t_monitored_barrier(rank, size, gloo):
    pg = c10d._get_default_group()
    pg.monitored_barrier(datetime.timedelta(seconds=10), wait_all_ranks=True)
    # Every rank but the last arrives; rank 0 names it, the others are not released.
    if rank != size - 1:
        words = (f"Rank {size - 1} failed to pass monitoredBarrier",) if rank == 0 else \
            (f"Rank {rank} successfully reached monitoredBarrier",)
        expect_error(lambda: pg.monitored_barrier(datetime.timedelta(seconds=1),
                                                  wait_all_ranks=False), *words)
    dist.barrier()  # the data path is untouched
    if size > 2 and rank == 0:
        missing = ", ".join(str(r) for r in range(1, size))
        expect_error(lambda: pg.monitored_barrier(datetime.timedelta(seconds=1),
                                                  wait_all_ranks=True),
                     f"Ranks {missing} failed to pass monitoredBarrier")
    dist.barrier()


def t_sequence_number(rank, size, gloo):
    # torch sets it on gloo (and nccl) groups; the suite's as_gloo mode depends on it.
    pg = c10d._get_default_group()
    pg._set_sequence_number_for_group()
    first = pg._get_sequence_number_for_group()
    everyone = [None] * size
    dist.all_gather_object(everyone, first, group=gloo)
    check(len(set(everyone)) == 1, f"sequence numbers differ across ranks: {everyone}")
    dist.all_reduce(torch.ones(2))
    check(pg._get_sequence_number_for_group() == first + 1, "one more after an all_reduce")


def t_recv_any_source(rank, size, gloo):
    # Every rank sends two messages to every other; each receives 2 * (size - 1) from any
    # source (recv and irecv without src): each sender's two, in order, the source right.
    got_from = []
    for dst in range(size):
        if dst == rank:
            for k in range(2 * (size - 1)):
                t = torch.full((10,), -1.0)
                if k % 2 == 0:
                    src = dist.recv(t)
                else:
                    w = dist.irecv(t)
                    w.wait()
                    src = w._source_rank()
                check(0 <= src < size and src != rank, f"source {src}")
                nth = got_from.count(src)
                check_tensor(t, torch.full((10,), float(src * 10 + nth)), f"from {src}")
                got_from.append(src)
        else:
            for i in range(2):
                dist.send(torch.full((10,), float(rank * 10 + i)), dst)
    for p in peers(rank, size):
        check(got_from.count(p) == 2, f"messages from {p}: {got_from}")


if __name__ == "__main__":
    rank, size, gloo = init(timeout_s=20)
    main([t_irecv_before_isend, t_batch_isend_irecv, t_tags, t_recv_any_source,
          t_all_gather_coalesced,
          t_sparse_all_reduce, t_monitored_barrier, t_sequence_number], rank, size, gloo)
