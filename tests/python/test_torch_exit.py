"""Leaving right after the last operation, as short scripts do: no barrier, the Work and
tensors dropped just before the interpreter finalizes. The backend's threads must not
release tensors themselves then (Python kills a thread that takes the GIL during
finalization: std::terminate, SIGABRT). Before the fix this aborted about one run in four
at 4 ranks ("destroy"); the arguments: destroy = destroy_process_group() first, keep = not."""
import sys

import torch
import torch.distributed as dist

from torch_harness import init


def run():
    work = None
    for i in range(200):
        t = torch.ones(1000) * i
        dist.all_reduce(t)
        work = dist.all_reduce(torch.ones(10), async_op=True)
        work.get_future().then(lambda f: f.value()[0].sum())
    work.wait()


if __name__ == "__main__":
    init(reference=False)  # no gloo group: its threads could abort finalization
    run()
    if sys.argv[1] == "destroy":
        dist.destroy_process_group()
