"""The backend's operations appear in a torch.profiler trace as "chorus:<op>" ranges
(issue 13): blocking and async ones, in prof.events() and in the exported Chrome trace."""
import json
import os
import tempfile

import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile

from torch_harness import check, init, main


def t_ranges_in_trace(rank, size, gloo):
    t = torch.ones(1024)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        dist.all_reduce(t)
        dist.broadcast(t, src=0)
        dist.all_reduce(t, async_op=True).wait()
        dist.barrier()
    names = [e.name for e in prof.events()]
    for want in ("chorus:allreduce", "chorus:broadcast", "chorus:barrier"):
        check(want in names, f"{want} missing from the profiler's events: {sorted(set(names))}")
    check(names.count("chorus:allreduce") >= 2, f"expected 2 all_reduce ranges: {names}")
    path = os.path.join(tempfile.gettempdir(),
                        f"chorus_prof_{os.environ['CHORUS_JOB_ID']}_{rank}.json")
    prof.export_chrome_trace(path)
    with open(path) as f:
        trace = json.load(f)
    os.unlink(path)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace  # object or array form
    traced = {e.get("name") for e in events}
    check("chorus:allreduce" in traced, f"chorus:allreduce missing from the Chrome trace: {traced}")
    check(torch.equal(t, torch.full((1024,), float(size * size))),
          f"all_reduce results wrong: {t[:4]}")


def t_without_profiler(rank, size, gloo):
    t = torch.ones(8)
    dist.all_reduce(t)  # no profiler: nothing recorded, still correct
    check(torch.equal(t, torch.full((8,), float(size))), f"all_reduce wrong: {t}")


if __name__ == "__main__":
    rank, size, gloo = init()
    main([t_ranges_in_trace, t_without_profiler], rank, size, gloo)
