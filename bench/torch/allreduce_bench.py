"""torch.distributed all_reduce through backend "chorus" and "gloo", side by side in one
run (float32 SUM, CPU tensors, 8 B to 64 MiB). Run under chorus-run:

    PYTHONPATH=build/python build/tools/chorus-run/chorus-run -n 4 /usr/bin/python3 bench/torch/allreduce_bench.py

Rank 0 prints one row per size: the median time of each backend over the iterations
(after warm-up), and busbw = 2 (n-1)/n * bytes / time."""
import os
import statistics
import sys
import tempfile
import time

import torch
import torch.distributed as dist

import chorus.torch  # noqa: F401

rank, size = int(os.environ["CHORUS_RANK"]), int(os.environ["CHORUS_WORLD_SIZE"])
path = os.path.join(tempfile.gettempdir(), "chorus_bench_" + os.environ["CHORUS_JOB_ID"])
dist.init_process_group("chorus", store=dist.FileStore(path, size), rank=rank, world_size=size)
gloo = dist.new_group(backend="gloo")
max_bytes = int(sys.argv[1]) if len(sys.argv) > 1 else 64 << 20


def timed(t, group, iters):
    for _ in range(2):
        dist.all_reduce(t, group=group)
    times = []
    for _ in range(iters):
        dist.barrier(group=gloo)
        start = time.perf_counter()
        dist.all_reduce(t, group=group)
        times.append(time.perf_counter() - start)
    # The slowest rank's time of each iteration, then the median.
    slowest = torch.tensor(times, dtype=torch.float64)
    dist.all_reduce(slowest, op=dist.ReduceOp.MAX, group=gloo)
    return statistics.median(slowest.tolist())


if rank == 0:
    print(f"torch all_reduce float32 sum, {size} ranks (median of the slowest rank)")
    print(f"{'bytes':>10} {'chorus us':>11} {'gloo us':>11} {'chorus GB/s':>12} {'gloo GB/s':>10}")
nbytes = 8
while nbytes <= max_bytes:
    t = torch.ones(nbytes // 4)
    iters = 50 if nbytes <= (1 << 20) else 10
    c = timed(t, None, iters)
    g = timed(t, gloo, iters)
    factor = 2 * (size - 1) / size * nbytes / 1e9
    if rank == 0:
        print(f"{nbytes:>10} {c * 1e6:>11.1f} {g * 1e6:>11.1f} {factor / c:>12.3f} {factor / g:>10.3f}",
              flush=True)
    nbytes *= 8 if nbytes < (1 << 20) else 2
dist.barrier()
dist.destroy_process_group(gloo)
dist.destroy_process_group()
