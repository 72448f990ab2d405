"""The timeout given to init_process_group becomes Chorus's per-operation deadline: with
2 s, rank 0's all_reduce fails with Chorus's timeout error while the other ranks are still
asleep (8 s), well before any default deadline; they then fail too, with an error, not a
hang."""
import os
import re
import sys
import time
import traceback

import torch
import torch.distributed as dist

from torch_harness import check, init


def main():
    rank, size, _ = init(timeout_s=2)
    t = torch.ones(4)
    dist.all_reduce(t)  # fine while everyone is there
    check(torch.equal(t, torch.full((4,), float(size))), "first all_reduce")
    if rank != 0:
        time.sleep(8)
    start = time.monotonic()
    try:
        dist.all_reduce(t)
    except RuntimeError as e:
        took = time.monotonic() - start
        msg = str(e)
        check("chorus backend" in msg, f"rank {rank}: not Chorus's error: {msg}")
        if rank == 0:
            check("timeout" in msg and 1.5 < took < 6.0,
                  f"rank 0: expected Chorus's timeout after ~2 s, got after {took:.2f} s: {msg}")
            # torch's own tests (and users) look for the word between spaces.
            check(re.search(" (Timed out|closed|timeout) ", msg) is not None,
                  f"rank 0: torch's timeout regex does not match: {msg}")
        print(f"rank {rank}: failed after {took:.2f} s as expected: {msg[:200]}", flush=True)
        os._exit(0)
    raise AssertionError(f"rank {rank}: all_reduce succeeded although rank 0 timed out")


if __name__ == "__main__":
    try:
        main()
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)
