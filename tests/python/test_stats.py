"""Communicator.stats() from Python (run with CHORUS_STATS=1): one row per (op, size
class) with counts, bytes and times of the operations this rank ran."""
import numpy as np

from harness import check, main


def test_stats_rows(comm):
    x = np.ones(1 << 18, dtype=np.float32)  # 1 MiB
    for _ in range(5):
        comm.all_reduce(x)
    comm.barrier()
    rows = {(r["op"], r["size_class"]): r for r in comm.stats()}
    ar = rows.get(("all_reduce", 1 << 20))
    check(ar is not None, f"no all_reduce 1M row in {list(rows)}")
    check(ar["count"] == 5 and ar["bytes"] == 5 << 20, f"all_reduce row: {ar}")
    check(0 < ar["p50_us"] <= ar["p99_us"] * 1.0001 and ar["mean_us"] > 0, f"times: {ar}")
    check(ar["busbw_gbps"] > 0 and ar["algo"], f"busbw/algo: {ar}")
    check(("barrier", 0) in rows, f"no barrier row in {list(rows)}")
    check("all_reduce" in comm.stats_text(), "stats_text names all_reduce")


if __name__ == "__main__":
    main([test_stats_rows])
