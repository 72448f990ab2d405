"""Communicator.estimate() from Python on the real (shm) transport: it names the
algorithm the collectives then run (the statistics record it), every rank gets the same
answer, and the predicted time is within a generous factor of the measured one.

Tolerance: the median of 20 timed 1 MiB all_reduces must lie within a factor of 100 of
the prediction either way. The model is a ranking tool (docs/ALGORITHMS.md, "The cost
model"); on the shared 2-CPU test host (load 10-15 from other builds) ranks are
descheduled for milliseconds, so only gross errors (us taken for ns or s, bytes for
MB) are caught here. Figures: docs/PERFORMANCE.md, "Cost model".
Run with CHORUS_STATS=1."""
import statistics
import time

import numpy as np

import chorus
from harness import check, expect_error, main


def test_estimate_names_what_runs(comm):
    n = 1 << 18  # 1 MiB of float32
    e = comm.estimate("all_reduce", n)
    check(set(e) >= {"algo", "predicted_us", "source", "rule_algo", "model_algo", "candidates"},
          f"fields: {e}")
    check(e["algo"] in e["candidates"], f"{e['algo']} not among {e['candidates']}")
    check(e["predicted_us"] > 0, f"no prediction on shm: {e}")
    x = np.ones(n, dtype=np.float32)
    times = []
    for _ in range(20):
        t0 = time.perf_counter()
        comm.all_reduce(x)
        times.append((time.perf_counter() - t0) * 1e6)
    comm.barrier()
    ran = {r["algo"] for r in comm.stats() if r["op"] == "all_reduce" and r["size_class"] == 1 << 20}
    check(ran == {e["algo"]}, f"estimate said {e['algo']}, the all_reduces ran {ran}")
    measured = statistics.median(times)
    ratio = measured / e["predicted_us"]
    print(f"rank {comm.rank}: all_reduce 1 MiB {e['algo']} predicted {e['predicted_us']:.1f} us,"
          f" measured median {measured:.1f} us, ratio {ratio:.2f}", flush=True)
    check(1 / 100 < ratio < 100, f"measured {measured:.1f} us vs predicted {e['predicted_us']:.1f}")
    # The same answer on every rank.
    mine = np.array([e["predicted_us"]], dtype=np.float64)
    lo, hi = mine.copy(), mine.copy()
    comm.all_reduce(lo, op="min")
    comm.all_reduce(hi, op="max")
    check(lo[0] == hi[0], f"ranks predicted differently: {lo[0]} vs {hi[0]}")


def test_estimate_errors(comm):
    expect_error(chorus.InvalidArgumentError, lambda: comm.estimate("all_reduse", 8), "all_reduse")
    expect_error(chorus.InvalidArgumentError, lambda: comm.estimate("all_reduce", -1), "count")
    check(comm.estimate("barrier", 0)["algo"] == "shm", "barrier on shm")


if __name__ == "__main__":
    main([test_estimate_names_what_runs, test_estimate_errors])
