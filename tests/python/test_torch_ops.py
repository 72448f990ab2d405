"""Every ProcessGroup operation of backend "chorus" against the gloo backend's results on
the same inputs (gloo lacks reduce_scatter and list all_to_all in torch 1.13: those are
checked against gloo all_reduce / all_to_all_single of the same data)."""
import torch
import torch.distributed as dist

from torch_harness import check, check_tensor, expect_error, init, main

# gloo has no bfloat16: those are checked against gloo on float32 inputs (exact: the
# values are small integers).
DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8,
          torch.uint8, torch.int32, torch.int64]
OPS = [dist.ReduceOp.SUM, dist.ReduceOp.PRODUCT, dist.ReduceOp.MIN, dist.ReduceOp.MAX]
N = 11


def gloo_dtype(dt):
    return torch.float32 if dt == torch.bfloat16 else dt


def data(rank, dt, n=N, salt=0):
    """Small integers 1..3 (products of 4 ranks fit int8), different on every rank."""
    return ((torch.arange(n) * 7 + rank * 3 + salt) % 3 + 1).to(dt)


def ref(tensor, dt):
    """The gloo-side copy of an input (float32 in place of bfloat16)."""
    return tensor.clone().to(gloo_dtype(dt))


def same(actual, expected, what):
    check_tensor(actual, expected.to(actual.dtype), what)


def t_broadcast(rank, size, gloo):
    for dt in DTYPES:
        root = size - 1
        a = data(rank, dt)
        b = ref(a, dt)
        dist.broadcast(a, src=root)
        dist.broadcast(b, src=root, group=gloo)
        same(a, b, f"broadcast {dt}")


def t_all_reduce(rank, size, gloo):
    for dt in DTYPES:
        for op in OPS:
            a = data(rank, dt)
            b = ref(a, dt)
            dist.all_reduce(a, op=op)
            dist.all_reduce(b, op=op, group=gloo)
            same(a, b, f"all_reduce {op} {dt}")
    for dt in (torch.float32, torch.float64):  # gloo has no AVG: SUM / size
        a = data(rank, dt)
        b = ref(a, dt)
        dist.all_reduce(a, op=dist.ReduceOp.AVG)
        dist.all_reduce(b, group=gloo)
        check(torch.allclose(a, b / size), f"all_reduce AVG {dt}: {a} vs {b / size}")


def t_all_reduce_coalesced(rank, size, gloo):
    for dt in (torch.float32, torch.int64):
        a = [data(rank, dt, 5), data(rank, dt, 3, salt=1).reshape(3, 1)]
        b = [ref(t, dt) for t in a]
        dist.all_reduce_coalesced(a)
        dist.all_reduce_coalesced(b, group=gloo)
        for x, y in zip(a, b):
            same(x, y, f"all_reduce_coalesced {dt}")


def t_reduce(rank, size, gloo):
    dst = 1 % size
    for dt in DTYPES:
        for op in (dist.ReduceOp.SUM, dist.ReduceOp.MAX):
            a = data(rank, dt)
            b = ref(a, dt)
            dist.reduce(a, dst=dst, op=op)
            dist.reduce(b, dst=dst, op=op, group=gloo)
            if rank == dst:
                same(a, b, f"reduce {op} {dt}")


def t_all_gather(rank, size, gloo):
    for dt in DTYPES:
        a = data(rank, dt).reshape(1, N)
        outs = [torch.zeros(1, N, dtype=dt) for _ in range(size)]
        refs = [torch.zeros(1, N, dtype=gloo_dtype(dt)) for _ in range(size)]
        dist.all_gather(outs, a)
        dist.all_gather(refs, ref(a, dt), group=gloo)
        for x, y in zip(outs, refs):
            same(x, y, f"all_gather {dt}")
        out = torch.zeros(size * N, dtype=dt)
        dist.all_gather_into_tensor(out, a.reshape(N))
        same(out, torch.cat(refs).reshape(-1), f"all_gather_into_tensor {dt}")


def t_gather_scatter(rank, size, gloo):
    for dt in DTYPES:
        a = data(rank, dt)
        outs = [torch.zeros(N, dtype=dt) for _ in range(size)] if rank == 0 else None
        refs = [torch.zeros(N, dtype=gloo_dtype(dt)) for _ in range(size)] if rank == 0 else None
        dist.gather(a, outs, dst=0)
        dist.gather(ref(a, dt), refs, dst=0, group=gloo)
        if rank == 0:
            for x, y in zip(outs, refs):
                same(x, y, f"gather {dt}")
        src = size - 1
        pieces = [data(rank, dt, salt=p) for p in range(size)] if rank == src else None
        out = torch.zeros(N, dtype=dt)
        expect = torch.zeros(N, dtype=gloo_dtype(dt))
        dist.scatter(out, pieces, src=src)
        dist.scatter(expect, [ref(p, dt) for p in pieces] if pieces else None, src=src,
                     group=gloo)
        same(out, expect, f"scatter {dt}")


def t_reduce_scatter(rank, size, gloo):
    for dt in DTYPES:
        for op in OPS:
            ins = [data(rank, dt, salt=p) for p in range(size)]
            expect = ref(torch.cat(ins), dt)
            dist.all_reduce(expect, op=op, group=gloo)
            expect = expect[rank * N:(rank + 1) * N]
            out = torch.zeros(N, dtype=dt)
            dist.reduce_scatter(out, ins, op=op)
            same(out, expect, f"reduce_scatter {op} {dt}")
            out2 = torch.zeros(N, dtype=dt)
            dist.reduce_scatter_tensor(out2, torch.cat(ins), op=op)
            same(out2, expect, f"reduce_scatter_tensor {op} {dt}")


def t_all_to_all(rank, size, gloo):
    for dt in DTYPES:
        a = data(rank, dt, size * 3).reshape(size * 3, 1)
        out = torch.zeros_like(a)
        expect = torch.zeros_like(ref(a, dt))
        dist.all_to_all_single(out, a)
        dist.all_to_all_single(expect, ref(a, dt), group=gloo)
        same(out, expect, f"all_to_all_single {dt}")
        # Uneven splits: rank r sends (r + p) % 3 + 1 rows of 2 to rank p.
        in_splits = [(rank + p) % 3 + 1 for p in range(size)]
        out_splits = [(q + rank) % 3 + 1 for q in range(size)]
        a = data(rank, dt, 2 * sum(in_splits)).reshape(-1, 2)
        out = torch.zeros(sum(out_splits), 2, dtype=dt)
        expect = torch.zeros(sum(out_splits), 2, dtype=gloo_dtype(dt))
        dist.all_to_all_single(out, a, out_splits, in_splits)
        dist.all_to_all_single(expect, ref(a, dt), out_splits, in_splits, group=gloo)
        same(out, expect, f"all_to_all_single with splits {dt}")
        # The list form, same uneven layout (gloo: all_to_all_single of the same data).
        ins = list(a.split(in_splits))
        outs = [torch.zeros(s, 2, dtype=dt) for s in out_splits]
        dist.all_to_all(outs, ins)
        same(torch.cat(outs), expect, f"all_to_all {dt}")


def t_send_recv(rank, size, gloo):
    for dt in DTYPES:
        nxt, prv = (rank + 1) % size, (rank - 1) % size
        a = data(rank, dt)
        got = torch.zeros(N, dtype=dt)
        reqs = [dist.isend(a, nxt), dist.irecv(got, prv)]
        for r in reqs:
            r.wait()
        same(got, data(prv, dt), f"send/recv {dt}")
    if size >= 2:  # blocking pair 0 <-> 1
        t = torch.full((4,), float(rank))
        if rank == 0:
            dist.send(t, 1)
            dist.recv(t, 1)
            same(t, torch.full((4,), 1.0), "recv on 0")
        elif rank == 1:
            got = torch.zeros(4)
            dist.recv(got, 0)
            same(got, torch.zeros(4), "recv on 1")
            dist.send(t, 0)


def t_barrier(rank, size, gloo):
    for _ in range(3):
        dist.barrier()


def t_async_future(rank, size, gloo):
    a = data(rank, torch.float32)
    b = ref(a, torch.float32)
    work = dist.all_reduce(a, async_op=True)
    fut = work.get_future().then(lambda f: f.value()[0] * 2)
    doubled = fut.wait()
    work.wait()
    check(work.is_completed() and work.is_success(), "work completed and successful")
    dist.all_reduce(b, group=gloo)
    same(doubled, b * 2, "future.then result")
    same(a, b, "async all_reduce")
    # After wait(), the Future is complete too and holds the output tensors.
    for _ in range(20):
        c = data(rank, torch.int32)
        w = dist.all_reduce(c, async_op=True)
        w.wait()
        check(w.get_future().done(), "future done after wait()")
        check(w.get_future().value()[0] is c or torch.equal(w.get_future().value()[0], c),
              "future value is the output")
    # Several in flight at once, waited in reverse order.
    ts = [data(rank, torch.float64, salt=i) for i in range(5)]
    works = [dist.all_reduce(t, async_op=True) for t in ts]
    for w in reversed(works):
        w.wait()
    for i, t in enumerate(ts):
        e = ref(data(rank, torch.float64, salt=i), torch.float64)
        dist.all_reduce(e, group=gloo)
        same(t, e, f"async all_reduce {i}")


def t_new_group(rank, size, gloo):
    members = list(range(0, size, 2))
    sub = dist.new_group(members)
    if rank in members:
        a = data(rank, torch.int64)
        dist.all_reduce(a, group=sub)
        same(a, sum(data(r, torch.int64) for r in members), "new_group all_reduce")
        check(dist.get_backend(sub) == "chorus", "new_group backend")


def t_errors(rank, size, gloo):
    # Every rank raises before communicating, so the group stays usable.
    expect_error(lambda: dist.all_reduce(torch.zeros(4, 4).t()), "not contiguous")
    expect_error(lambda: dist.all_reduce(torch.zeros(4, dtype=torch.bool)), "Bool",
                 "does not support")
    expect_error(lambda: dist.all_reduce(torch.zeros(4, dtype=torch.int16)), "Short",
                 "does not support")
    expect_error(lambda: dist.all_reduce(torch.zeros(4, dtype=torch.int32),
                                         op=dist.ReduceOp.BAND), "not supported")
    expect_error(lambda: dist.send(torch.zeros(2), (rank + 1) % size, tag=-1), "tag must be >= 0")
    a = torch.ones(3)
    dist.all_reduce(a)
    same(a, torch.full((3,), float(size)), "usable after errors")


def t_registered(rank, size, gloo):
    """Tensors in registered memory (chorus.torch.registered_tensor) give gloo's results."""
    from chorus.torch import registered_tensor
    n = 70001  # several pages and a tail
    a = registered_tensor(n)
    a.copy_(data(rank, torch.float32, n))
    out = registered_tensor((size, n))
    for _ in range(8):  # long enough for the ranks to agree that every buffer is registered
        dist.all_gather_into_tensor(out, a)
    refs = [torch.zeros(n) for _ in range(size)]
    dist.all_gather(refs, a.clone(), group=gloo)
    same(out, torch.stack(refs), "all_gather_into_tensor, registered")
    x = registered_tensor(size * n)
    x.copy_(data(rank, torch.float32, size * n, salt=5))
    y = registered_tensor(size * n)
    dist.all_to_all_single(y, x)
    expect = torch.zeros(size * n)
    dist.all_to_all_single(expect, x.clone(), group=gloo)
    same(y, expect, "all_to_all_single, registered")
    b = ref(x, torch.float32)
    dist.all_reduce(x)
    dist.all_reduce(b, group=gloo)
    same(x, b, "all_reduce, registered")
    check(registered_tensor(0).numel() == 0 and registered_tensor((2, 3)).shape == (2, 3),
          "registered_tensor shapes")


if __name__ == "__main__":
    rank, size, gloo = init()
    main([t_broadcast, t_all_reduce, t_all_reduce_coalesced, t_reduce, t_all_gather,
          t_gather_scatter, t_reduce_scatter, t_all_to_all, t_send_recv, t_barrier,
          t_async_future, t_new_group, t_registered, t_errors], rank, size, gloo)
