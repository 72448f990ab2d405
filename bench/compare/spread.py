#!/usr/bin/env python3
"""How steady is a run? chorus-bench times every iteration; this runs it for the given
ops and sizes and prints, per size, the mean, the fastest and the slowest iteration
(each the slowest rank's) and slowest / fastest.

  python3 bench/compare/spread.py [--build-dir build] [--ranks 4] [--tcp]
                                  [--ops all_reduce,reduce_scatter] [-b 64K] [-e 64M] [-f 8]
                                  [-n 20] [-w 3] [--sync] [--peers DIR]

--tcp runs with CHORUS_TRANSPORT=tcp. --sync times every iteration on its own (chorus-bench
--sync: a barrier, then the operation, until its last rank is done) instead of back to back,
where a rank that falls behind makes one interval long and the next one short. --peers DIR
also runs Gloo and Open MPI over TCP the same way (DIR from bench/compare/build.sh), one
after the other for each op. Exit status 1 when a run fails or a result is wrong.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def command(args, system, op, path, tmp):
    sweep = ["--op", op, "-b", args.b, "-e", args.e, "-f", str(args.f), "-n", str(args.n),
             "-w", str(args.w), "-c", "1", "--json", path] + (["--sync"] if args.sync else [])
    run = [os.path.join(args.build_dir, "tools/chorus-run/chorus-run"), "-n", str(args.ranks),
           "--timeout", "600", "--"]
    if system == "chorus":
        return run + [os.path.join(args.build_dir, "tools/chorus-bench/chorus-bench")] + sweep
    if system == "gloo":
        store = os.path.join(tmp, "store")
        os.makedirs(store, exist_ok=True)
        return run + [os.path.join(args.peers, "gloo_bench"), "--store", store] + sweep
    root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
    return (["mpirun"] + root + ["--oversubscribe", "--bind-to", "none", "-np", str(args.ranks),
             "--mca", "pml", "ob1", "--mca", "btl", "self,tcp", "--mca", "btl_tcp_if_include",
             "lo", os.path.join(args.peers, "mpi_bench")] + sweep)


def run(args, system, op):
    env = dict(os.environ)
    if args.tcp and system == "chorus":
        env["CHORUS_TRANSPORT"] = "tcp"
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "rows.json")
        done = subprocess.run(command(args, system, op, path, tmp), env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              timeout=700)
        if done.returncode != 0 or not os.path.exists(path):
            sys.exit("spread: %s %s failed (%d): %s" % (system, op, done.returncode,
                                                        done.stderr[-2000:]))
        with open(path) as f:
            return json.load(f)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build-dir", default="build")
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--tcp", action="store_true")
    p.add_argument("--ops", default="all_reduce,reduce_scatter")
    p.add_argument("-b", default="64K")
    p.add_argument("-e", default="64M")
    p.add_argument("-f", type=int, default=8)
    p.add_argument("-n", type=int, default=20)
    p.add_argument("-w", type=int, default=3)
    p.add_argument("--sync", action="store_true")
    p.add_argument("--peers", help="directory of gloo_bench and mpi_bench")
    args = p.parse_args()
    systems = ["chorus"] + (["gloo", "mpi-tcp"] if args.peers else [])
    print("| op | size (B) | system | mean (us) | fastest (us) | slowest (us) | slowest / fastest |")
    print("|---|---:|---|---:|---:|---:|---:|")
    bad = 0
    for op in args.ops.split(","):
        rows = {s: run(args, s, op) for s in systems}
        for i, r in enumerate(rows["chorus"]):
            for s in systems:
                r = rows[s][i]
                bad += (r.get("oop_wrong") or 0) + (r.get("ip_wrong") or 0)
                lo, hi = r["oop_min_us"], r["oop_max_us"]
                name = "chorus-tcp" if s == "chorus" and args.tcp else s
                print("| %s | %d | %s | %.1f | %.1f | %.1f | %.2f |" %
                      (op, r["size"], name, r["oop_time_us"], lo, hi,
                       hi / lo if lo > 0 else float("inf")))
    if bad:
        sys.exit("spread: %d wrong elements" % bad)


if __name__ == "__main__":
    main()
