#!/usr/bin/env python3
"""Side-by-side comparison of Chorus with Open MPI (shared memory and TCP) and Gloo.

Builds chorus-bench (if needed) and the peer benchmarks mpi_bench and gloo_bench, runs the
systems interleaved (chorus, [chorus-tcp], mpi-shm, mpi-tcp, gloo, each cell of each repeat
in its own order, shuffled with a fixed seed, so no system always runs right after the same
other; then again, --repeats times) on the same ops, sizes and rank counts, and prints one
Markdown table of median
time / busbw per system with Chorus's busbw over the best peer's. Every result is checked;
a failed check or launch marks its rows and makes the exit status 1.

  python3 bench/compare/compare.py [--build-dir build] [--quick] [--ranks 2,4] ...
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import machine  # noqa: E402  (after the line above)
from systems import Cell, make_systems  # noqa: E402
from stream import describe_all, make_streams  # noqa: E402
from table import Results  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ALL_OPS = ["all_reduce", "all_gather", "reduce_scatter", "broadcast", "all_to_all"]
FULL = dict(b="8", e="64M", f="4", other="1K:4M:16", iters=20, warmup=5, ranks="2,4",
            repeats=3, ops=",".join(ALL_OPS))
QUICK = dict(b="8", e="1M", f="32", other="4K:256K:64", iters=10, warmup=2, ranks="2",
             repeats=1, ops="all_reduce,broadcast")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build-dir", default="build", help="Chorus build directory (default build)")
    p.add_argument("-b", "--minbytes", help="all_reduce: smallest size (default 8)")
    p.add_argument("-e", "--maxbytes", help="all_reduce: largest size (default 64M)")
    p.add_argument("-f", "--stepfactor", help="all_reduce: size factor (default 4)")
    p.add_argument("--other-sizes", help="MIN:MAX:FACTOR of the other ops (default 1K:4M:16)")
    p.add_argument("-n", "--iters", type=int, help="timed iterations per size (default 20)")
    p.add_argument("-w", "--warmup", type=int, help="warm-up iterations (default 5)")
    p.add_argument("--ranks", help="comma-separated rank counts (default 2,4)")
    p.add_argument("--ops", help="comma-separated ops, or all (the default)")
    p.add_argument("-r", "--repeats", type=int, help="interleaved repeats, median taken (3)")
    p.add_argument("--chorus-tcp", action="store_true",
                   help="add a chorus-tcp column (CHORUS_TRANSPORT=tcp) and the loopback "
                   "baselines (one stream, a ring of the cell's ranks)")
    p.add_argument("--stream-bytes", default="1G",
                   help="bytes of each loopback baseline measurement (default 1G; a "
                   "ring's processes share them)")
    p.add_argument("--quick", action="store_true",
                   help="2 ranks, all_reduce and broadcast, few sizes, 1 repeat")
    p.add_argument("--registered", action="store_true",
                   help="Chorus's buffers from chorus::mem_alloc (chorus-bench -R); the peers' "
                        "stay on the heap")
    p.add_argument("--no-install", action="store_true", help="do not run install-deps.sh")
    p.add_argument("--markdown", help="also write the machine, command and table here")
    p.add_argument("--json", help="also write the median time/busbw of every cell and system "
                                  "here (input of bench/plots/plot.py busbw)")
    p.add_argument("--log", help="output of every launch (default BUILD/compare/compare.log)")
    a = p.parse_args(argv)
    base = QUICK if a.quick else FULL
    for name, key in [("minbytes", "b"), ("maxbytes", "e"), ("stepfactor", "f"),
                      ("other_sizes", "other"), ("iters", "iters"), ("warmup", "warmup"),
                      ("ranks", "ranks"), ("repeats", "repeats"), ("ops", "ops")]:
        if getattr(a, name) is None:
            setattr(a, name, base[key])
    a.ranks = [int(x) for x in a.ranks.split(",")]
    a.ops = ALL_OPS if a.ops == "all" else a.ops.split(",")
    bad = [op for op in a.ops if op not in ALL_OPS]
    if bad or len(a.other_sizes.split(":")) != 3 or min(a.ranks) < 2:
        p.error("bad --ops %s, --other-sizes or --ranks" % bad)
    return a


def step(msg, argv, **kw):
    """Runs a setup command; returns True on success."""
    print("compare: " + msg, file=sys.stderr)
    return subprocess.run(argv, cwd=ROOT, **kw).returncode == 0


def prepare(a):
    """Builds Chorus and the peers; returns (have_mpi, have_gloo, have_stream, peer_dir)."""
    bench = os.path.join(a.build_dir, "tools", "chorus-bench", "chorus-bench")
    run = os.path.join(a.build_dir, "tools", "chorus-run", "chorus-run")
    if not (os.path.exists(bench) and os.path.exists(run)):
        if not step("building Chorus", ["make", "build", "BUILD=" + a.build_dir]):
            sys.exit("compare: Chorus does not build")
    if not a.no_install and not step("checking Open MPI and Gloo packages",
                                     [os.path.join(HERE, "install-deps.sh")]):
        print("compare: could not install the peers' packages; missing peers are skipped",
              file=sys.stderr)
    peer_dir = os.path.join(a.build_dir, "compare")
    build = os.path.join(HERE, "build.sh")
    have_mpi = (shutil.which("mpicxx") is not None and shutil.which("mpirun") is not None
                and step("building mpi_bench", [build, peer_dir, "mpi"]))
    have_gloo = (os.path.isdir("/usr/include/gloo")
                 and step("building gloo_bench", [build, peer_dir, "gloo"]))
    have_stream = a.chorus_tcp and step("building tcp_stream", [build, peer_dir, "stream"])
    for name, ok in [("Open MPI", have_mpi), ("Gloo", have_gloo)]:
        if not ok:
            print("compare: %s is not available; its columns are left out" % name,
                  file=sys.stderr)
    return have_mpi, have_gloo, have_stream, peer_dir


def cells(a):
    """Every (ranks, op) launch of one repeat, with its sizes."""
    other = tuple(a.other_sizes.split(":"))
    for n in a.ranks:
        for op in a.ops:
            sizes = (a.minbytes, a.maxbytes, a.stepfactor) if op == "all_reduce" else other
            yield Cell(n, op, sizes, a.iters, a.warmup)


def launch_order(systems, rep, index):
    """The systems of cell `index` of repeat `rep` in a shuffled order, the same in every
    run. A fixed order would always launch one system right after another (chorus after
    gloo of the cell before): on a small VM a run after another one's exit can find the
    machine in a slower state (docs/PERFORMANCE.md, "Session 18")."""
    order = list(systems)
    random.Random(1000003 * rep + index).shuffle(order)
    return order


def main(argv):
    a = parse_args(argv)
    os.chdir(ROOT)
    have_mpi, have_gloo, have_stream, peer_dir = prepare(a)
    systems = make_systems(a.build_dir, peer_dir, a.chorus_tcp, have_mpi, have_gloo,
                           a.registered)
    results = Results([s.name for s in systems])
    streams = make_streams(peer_dir, a.stream_bytes) if have_stream else []
    results.stream_names = [st.name for st in streams]
    log_path = a.log or os.path.join(peer_dir, "compare.log")
    os.makedirs(os.path.dirname(os.path.abspath(log_path)), exist_ok=True)
    command = "python3 bench/compare/compare.py " + " ".join(argv)
    header = machine.describe(command, have_mpi, have_gloo)
    start = time.time()
    with open(log_path, "w") as log:
        for rep in range(a.repeats):
            for index, cell in enumerate(cells(a)):
                for s in launch_order(systems, rep, index):
                    t0 = time.time()
                    res = s.run(cell, log)
                    results.add(s.name, cell, res)
                    note = ("  FAILED: " + res.error) if res.error else ""
                    print("compare: [%d/%d] %d ranks %-14s %-10s %5.1f s%s" % (
                        rep + 1, a.repeats, cell.nranks, cell.op, s.name, time.time() - t0,
                        note), file=sys.stderr)
                for st in streams if cell.op == "all_reduce" else []:
                    gbps = st.run(log, cell.nranks)
                    results.add_stream(st.name, gbps, cell.nranks if st.ring else None)
                    print("compare: [%d/%d] loopback %s: %s" % (
                        rep + 1, a.repeats, st.name, "%.2f GB/s" % gbps if gbps else "FAILED"),
                        file=sys.stderr)
    footer = "Took %.0f s; load average at the end: %s. Launch output: %s" % (
        time.time() - start, machine.loadavg(), log_path)
    table = results.markdown(a.ops, a.ranks)
    parts = [header, "Cells: median time (us) / busbw (GB/s) over %d interleaved "
             "runs; chorus/best peer: Chorus busbw / best peer busbw (> 1: Chorus "
             "faster). Chorus rows are its out-of-place form, except broadcast: in place, "
             "one buffer per rank as in MPI_Bcast and gloo::broadcast." % a.repeats]
    if streams:
        parts.append(describe_all(streams, results))
    parts += [table, results.summary(a.ops, a.ranks), footer]
    text = "\n\n".join(parts)
    if results.any_failed():
        text += "\n\nFAILED: rows marked **!** had a wrong result or a failed launch (see log)."
    print(text)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text + "\n")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"machine": header, "rows": results.json_rows()}, f, indent=1)
    return 1 if results.any_failed() else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
