#!/usr/bin/python3
"""PNG charts of Chorus measurements with Debian's matplotlib (python3-matplotlib).

  plot.py busbw -o busbw.png [--op all_reduce] [--ranks 4] INPUT...
      busbw vs size, log axes, one line per system. INPUT is a chorus-bench --json file
      (LABEL=path to name its line; out-of-place busbw) or a bench/compare --json file
      (one line per system in it).
  plot.py timeline -o timeline.png [--window-ms 20] MERGED_TRACE [REPORT_JSON]
      from chorus-trace merge output: top, the spans of every rank and stream over the
      first --window-ms of the run (arrival wait hatched); bottom, per rank, the time its
      collectives spent waiting for the last rank to arrive vs moving data.
The CPU model (/proc/cpuinfo) is written on every figure."""
import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return "%s, %d CPUs" % (line.split(":", 1)[1].strip(), os.cpu_count())
    except OSError:
        pass
    return "unknown CPU"


def size_text(b):
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if b >= 1 << shift and b % (1 << shift) == 0:
            return "%d%s" % (b >> shift, unit)
    return str(b)


def busbw_series(inputs, op, ranks):
    """{label: [(size, busbw)]} from chorus-bench and compare JSON files."""
    series = {}
    for item in inputs:
        label, _, path = item.rpartition("=")
        with open(path) as f:
            data = json.load(f)
        if isinstance(data, dict) and "rows" in data:  # bench/compare --json
            for r in data["rows"]:
                if r["op"] == op and (ranks is None or r["nranks"] == ranks) and r["busbw_gbps"]:
                    name = "%s (%d ranks)" % (r["system"], r["nranks"]) if ranks is None else r["system"]
                    series.setdefault(name, []).append((r["size"], r["busbw_gbps"]))
        else:  # chorus-bench --json
            name = label or os.path.basename(path)
            for r in data:
                if r["op"] == op and (ranks is None or r["nranks"] == ranks):
                    series.setdefault(name, []).append((r["size"], r["oop_busbw"]))
    return {k: sorted(v) for k, v in series.items()}


def plot_busbw(a):
    series = busbw_series(a.inputs, a.op, a.ranks)
    if not series:
        sys.exit("plot.py: no %s rows in the inputs" % a.op)
    fig, ax = plt.subplots(figsize=(8, 5))
    for name, pts in series.items():
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, label=name)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    sizes = sorted({p[0] for pts in series.values() for p in pts})
    step = max(1, len(sizes) // 10)
    ax.set_xticks(sizes[::step])
    ax.set_xticklabels([size_text(s) for s in sizes[::step]])
    ax.set_xlabel("message size (bytes, nccl-tests convention)")
    ax.set_ylabel("busbw (GB/s)")
    ax.set_title("%s busbw%s" % (a.op, " (%d ranks)" % a.ranks if a.ranks else ""))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.text(0.01, 0.01, cpu_model(), fontsize=7, color="0.3")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(a.output, dpi=110)
    print("plot.py: wrote", a.output)


def plot_timeline(a):
    with open(a.trace) as f:
        ev = json.load(f)["traceEvents"]
    spans = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "chorus"]
    phases = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "chorus.phase"]
    if not spans:
        sys.exit("plot.py: no spans in " + a.trace)
    t0 = min(e["ts"] for e in spans)
    window = a.window_ms * 1e3
    ranks = sorted({e["pid"] for e in spans})
    tracks = sorted({(e["pid"], e["tid"]) for e in spans})
    names = {}
    for e in ev:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
    kinds = sorted({e["name"] for e in spans})
    colors = {k: plt.cm.tab10(i % 10) for i, k in enumerate(kinds)}
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(11, 3 + 0.28 * len(tracks) + 3),
                                      gridspec_kw={"height_ratios": [max(2, 0.28 * len(tracks)), 2.5]})
    row = {t: i for i, t in enumerate(tracks)}
    for e in spans:
        if e["ts"] - t0 > window:
            continue
        top.barh(row[(e["pid"], e["tid"])], e["dur"] / 1e3, left=(e["ts"] - t0) / 1e3, height=0.8,
                 color=colors[e["name"]], edgecolor="none")
    for e in phases:
        if e["name"] == "arrival wait" and e["ts"] - t0 <= window:
            top.barh(row[(e["pid"], e["tid"])], e["dur"] / 1e3, left=(e["ts"] - t0) / 1e3,
                     height=0.8, color="none", edgecolor="black", hatch="////", linewidth=0)
    top.set_yticks(range(len(tracks)))
    top.set_yticklabels(["rank %d %s" % (p, names.get((p, t), t)) for p, t in tracks], fontsize=7)
    top.invert_yaxis()
    top.set_xlim(0, a.window_ms)
    top.set_xlabel("ms since the first operation (aligned clocks; hatched: waiting for the last rank)")
    top.legend(handles=[plt.Rectangle((0, 0), 1, 1, color=colors[k]) for k in kinds], labels=kinds,
               fontsize=7, loc="upper right", ncol=len(kinds))
    wait = {r: 0.0 for r in ranks}
    xfer = {r: 0.0 for r in ranks}
    for e in phases:
        (wait if e["name"] == "arrival wait" else xfer)[e["pid"]] += e["dur"] / 1e3
    bottom.bar([str(r) for r in ranks], [xfer[r] for r in ranks], label="transfer (all ranks there)")
    bottom.bar([str(r) for r in ranks], [wait[r] for r in ranks], bottom=[xfer[r] for r in ranks],
               label="arrival wait", hatch="////", color="tab:orange")
    title = "time in collectives per rank (ms)"
    if a.report:
        with open(a.report) as f:
            rep = json.load(f)
        title += "; straggler: rank %d" % rep.get("straggler", -1)
    bottom.set_title(title, fontsize=9)
    bottom.set_xlabel("rank")
    bottom.set_ylabel("ms")
    bottom.legend(fontsize=8)
    fig.text(0.01, 0.005, cpu_model(), fontsize=7, color="0.3")
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    fig.savefig(a.output, dpi=110)
    print("plot.py: wrote", a.output)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("busbw", help="busbw vs size per system")
    b.add_argument("-o", "--output", required=True)
    b.add_argument("--op", default="all_reduce")
    b.add_argument("--ranks", type=int)
    b.add_argument("inputs", nargs="+")
    t = sub.add_parser("timeline", help="timeline summary of a merged trace")
    t.add_argument("-o", "--output", required=True)
    t.add_argument("--window-ms", type=float, default=20.0)
    t.add_argument("trace")
    t.add_argument("report", nargs="?")
    a = p.parse_args(argv)
    (plot_busbw if a.cmd == "busbw" else plot_timeline)(a)


if __name__ == "__main__":
    main(sys.argv[1:])
