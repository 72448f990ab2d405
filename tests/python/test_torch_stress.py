"""The 5-D stress pattern as users write it with torch.distributed on backend "chorus":
each step issues five collectives with async_op=True (tp all_reduce, dp all_reduce, ep
all_to_all_single, sp all_gather_into_tensor, pp all_gather), waits for them and checks every
result exactly. Ranks start with skewed clocks.

  agreed: stop after a wall-clock duration through all_reduce(MAX) of a time-is-up flag at
          every step boundary: every rank runs the same number of steps and exits cleanly.
  naive:  every rank stops on its own clock (rank r's deadline is r * 0.4 s later) and
          leaves: every rank still running must end in Chorus's peer_lost error naming a lost
          peer (rank 0, or a rank that already left after its own error),
          not hang."""
import os
import sys
import time

import torch
import torch.distributed as dist

from torch_harness import check, check_tensor, init

DURATION = 2.0
N = 1024


def groups(rank, size):
    """tp: pairs of neighbours; dp: the same position across pairs (the world when the
    world is one pair). new_group is collective: every rank creates every group."""
    tp = dp = None
    for g in range(0, size, 2):
        members = [g, g + 1]
        grp = dist.new_group(members)
        if rank in members:
            tp = grp
    if size == 2:
        return tp, None
    for pos in range(2):
        members = list(range(pos, size, 2))
        grp = dist.new_group(members)
        if rank in members:
            dp = grp
    return tp, dp


def step_once(step, rank, size, tp, dp):
    v = step % 7 + 1
    a_tp = torch.full((N,), float(rank + v))
    a_dp = torch.full((N,), rank + v, dtype=torch.int64)
    ep_in = (torch.arange(size * 4, dtype=torch.int32) + rank * 100 + v)
    ep_out = torch.zeros_like(ep_in)
    sp_in = torch.full((N,), float(rank * v), dtype=torch.float64)
    sp_out = torch.zeros(size * N, dtype=torch.float64)
    pp_in = torch.full((8,), rank + v, dtype=torch.int64)
    pp_out = [torch.zeros(8, dtype=torch.int64) for _ in range(size)]
    works = [dist.all_reduce(a_tp, group=tp, async_op=True),
             dist.all_reduce(a_dp, group=dp, async_op=True),
             dist.all_to_all_single(ep_out, ep_in, async_op=True),
             dist.all_gather_into_tensor(sp_out, sp_in, async_op=True),
             dist.all_gather(pp_out, pp_in, async_op=True)]
    for w in works:
        w.wait()
    pair = [rank - rank % 2, rank - rank % 2 + 1]
    check_tensor(a_tp, torch.full((N,), float(sum(r + v for r in pair))), "tp all_reduce")
    dp_members = range(size) if dp is None else range(rank % 2, size, 2)
    check_tensor(a_dp, torch.full((N,), sum(r + v for r in dp_members), dtype=torch.int64),
                 "dp all_reduce")
    expect_ep = torch.cat([torch.arange(rank * 4, rank * 4 + 4, dtype=torch.int32) + q * 100 + v
                           for q in range(size)])
    check_tensor(ep_out, expect_ep, "ep all_to_all_single")
    check_tensor(sp_out, torch.cat([torch.full((N,), float(q * v), dtype=torch.float64)
                                    for q in range(size)]), "sp all_gather_into_tensor")
    for q in range(size):
        check_tensor(pp_out[q], torch.full((8,), q + v, dtype=torch.int64), "pp all_gather")


def agreed(rank, size, tp, dp):
    time.sleep(0.2 * rank)  # skewed clocks
    start = time.monotonic()
    step = 0
    while True:
        step_once(step, rank, size, tp, dp)
        step += 1
        flag = torch.tensor([1 if time.monotonic() - start >= DURATION else 0])
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)
        if flag.item():
            break
    steps = [torch.zeros(1, dtype=torch.int64) for _ in range(size)]
    dist.all_gather(steps, torch.tensor([step]))
    check(all(int(s) == step for s in steps), f"step counts differ: {steps}")
    check(step >= 2, f"only {step} steps in {DURATION} s")
    print(f"rank {rank}: agreed exit after {step} steps", flush=True)
    dist.destroy_process_group()


def naive(rank, size, tp, dp):
    deadline = time.monotonic() + DURATION + 0.4 * rank
    step = 0
    try:
        while time.monotonic() < deadline:
            step_once(step, rank, size, tp, dp)
            step += 1
    except RuntimeError as e:
        msg = str(e)
        check("chorus" in msg and "peer_lost" in msg and "peer rank" in msg,
              f"rank {rank}: not Chorus's peer-lost error: {msg}")
        print(f"rank {rank}: step {step}: the expected error: {msg}", flush=True)
        os._exit(0)
    check(rank == 0, f"rank {rank} ran past the others' deadlines without an error")
    print(f"rank {rank}: left on its own clock after {step} steps", flush=True)
    os._exit(0)  # leaves without telling anyone, as the naive script does


if __name__ == "__main__":
    mode = sys.argv[1]
    rank, size, _ = init(timeout_s=30, reference=False)
    tp, dp = groups(rank, size)
    try:
        (agreed if mode == "agreed" else naive)(rank, size, tp, dp)
    except BaseException:  # noqa: BLE001
        import traceback
        traceback.print_exc()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)
