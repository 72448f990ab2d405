"""Leaving right after the last operation, as short scripts do: no barrier, the Work and
tensors dropped just before the interpreter finalizes. The backend's threads must not
release tensors themselves then (Python kills a thread that takes the GIL during
finalization: std::terminate, SIGABRT). Before the fix this aborted about one run in four
at 4 ranks ("destroy"); the arguments: destroy = destroy_process_group() first, keep = not.
Before leaving, every rank checks that the atexit drain releases the tensors of finished
operations itself: the background threads only hand them on, and a group's destruction
before they did once left the last reference, and the release, to such a thread."""
import gc
import sys
import weakref

import torch
import torch.distributed as dist

from chorus.torch import _chorus_torch
from torch_harness import check, init


def run():
    work = None
    for i in range(200):
        t = torch.ones(1000) * i
        dist.all_reduce(t)
        work = dist.all_reduce(torch.ones(10), async_op=True)
        work.get_future().then(lambda f: f.value()[0].sum())
    work.wait()


def drain_releases_finished_tensors():
    t = torch.ones(1000)
    alive = weakref.ref(t)
    work = dist.all_reduce(t, async_op=True)
    work.wait()
    del work, t
    gc.collect()
    check(_chorus_torch._drain(10.0), "drain timed out")
    check(alive() is None, "a finished all_reduce's tensor outlived the drain")


if __name__ == "__main__":
    init(reference=False)  # no gloo group: its threads could abort finalization
    run()
    drain_releases_finished_tensors()
    if sys.argv[1] == "destroy":
        dist.destroy_process_group()
