#!/usr/bin/env python3
"""How steady is a run? chorus-bench times every iteration; this runs it for the given
ops and sizes and prints, per size, the mean, the fastest and the slowest iteration
(each the slowest rank's) and slowest / fastest.

  python3 bench/compare/spread.py [--build-dir build] [--ranks 4] [--tcp]
                                  [--ops all_reduce,reduce_scatter] [-b 64K] [-e 64M] [-f 8]
                                  [-n 20] [-w 3]

--tcp runs with CHORUS_TRANSPORT=tcp. Exit status 1 when a run fails or a result is wrong.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def run(args, op):
    env = dict(os.environ)
    if args.tcp:
        env["CHORUS_TRANSPORT"] = "tcp"
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "rows.json")
        cmd = [os.path.join(args.build_dir, "tools/chorus-run/chorus-run"), "-n", str(args.ranks),
               "--timeout", "600", "--",
               os.path.join(args.build_dir, "tools/chorus-bench/chorus-bench"), "--op", op,
               "-b", args.b, "-e", args.e, "-f", str(args.f), "-n", str(args.n),
               "-w", str(args.w), "-c", "1", "--json", path]
        done = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True, timeout=700)
        if done.returncode != 0 or not os.path.exists(path):
            sys.exit("spread: %s failed (%d): %s" % (op, done.returncode, done.stderr[-2000:]))
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
    args = p.parse_args()
    print("| op | size (B) | mean (us) | fastest (us) | slowest (us) | slowest / fastest |")
    print("|---|---:|---:|---:|---:|---:|")
    bad = 0
    for op in args.ops.split(","):
        for r in run(args, op):
            bad += (r.get("oop_wrong") or 0) + (r.get("ip_wrong") or 0)
            lo, hi = r["oop_min_us"], r["oop_max_us"]
            print("| %s | %d | %.1f | %.1f | %.1f | %.2f |" %
                  (op, r["size"], r["oop_time_us"], lo, hi, hi / lo if lo > 0 else float("inf")))
    if bad:
        sys.exit("spread: %d wrong elements" % bad)


if __name__ == "__main__":
    main()
