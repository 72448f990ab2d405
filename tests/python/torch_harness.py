"""Shared helpers of the torch backend tests (run under chorus-run): the rank, size and a
torch FileStore named after chorus-run's job id, so every rank of one run meets there."""
import datetime
import os
import sys
import tempfile
import time
import traceback

import torch
import torch.distributed as dist

import chorus.torch  # noqa: F401 - registers backend "chorus"


def init(timeout_s=60, reference=True):
    """init_process_group("chorus") on a FileStore; returns (rank, size, gloo_group):
    a gloo group of every rank, for computing the reference results (None with
    reference=False: scripts that leave through interpreter finalization take none, as
    the group's worker threads may abort it then, see main())."""
    rank = int(os.environ["CHORUS_RANK"])
    size = int(os.environ["CHORUS_WORLD_SIZE"])
    path = os.path.join(tempfile.gettempdir(), "chorus_torch_" + os.environ["CHORUS_JOB_ID"])
    store = dist.FileStore(path, size)
    dist.init_process_group("chorus", store=store, rank=rank, world_size=size,
                            timeout=datetime.timedelta(seconds=timeout_s))
    gloo = dist.new_group(backend="gloo") if reference else None
    return rank, size, gloo


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def check_tensor(actual, expected, what):
    if actual.dtype != expected.dtype or actual.shape != expected.shape or \
            not torch.equal(actual, expected):
        raise AssertionError(f"{what}:\n  got      {actual!r}\n  expected {expected!r}")


def expect_error(fn, *words):
    """fn() must raise RuntimeError (or ValueError) whose message contains every word."""
    try:
        fn()
    except (RuntimeError, ValueError) as e:
        for w in words:
            check(w in str(e), f"error message {str(e)!r} lacks {w!r}")
        return
    raise AssertionError(f"expected an error mentioning {words}, nothing was raised")


def main(cases, *args):
    name = "?"
    rank = dist.get_rank()
    try:
        for case in cases:
            name = case.__name__
            start = time.monotonic()
            case(*args)
            print(f"rank {rank}: {name} ok ({time.monotonic() - start:.2f} s)", flush=True)
        dist.barrier()
        dist.destroy_process_group()
    except BaseException:  # noqa: BLE001 - any failure ends this rank with its traceback
        print(f"rank {rank}: {name} FAILED", flush=True)
        traceback.print_exc()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)
    # Leave without finalizing the interpreter: the gloo reference group's worker threads
    # (PyTorch 1.13) may still be releasing the tensors of a finished operation, and a
    # thread that takes the GIL during finalization aborts the process (SIGABRT, about
    # one run in 20 of test_torch_ddp under load; its core shows ProcessGroupGloo::runLoop
    # destroying a tensor). Chorus's own exit path is test_torch_exit's, which does finalize.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
