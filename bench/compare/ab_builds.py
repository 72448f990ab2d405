#!/usr/bin/env python3
"""Before/after A/B of two chorus builds, interleaved: every collective (chorus-bench --op all,
8 B to 16 MiB), 2 and 4 ranks; prints a markdown table of median times and the geomean.
usage: ab_builds.py BEFORE_BUILD_DIR AFTER_BUILD_DIR [rounds]"""
import json, os, subprocess, sys, tempfile, statistics
before, after = sys.argv[1], sys.argv[2]
reps = int(sys.argv[3]) if len(sys.argv) > 3 else 3
ops = ["all_reduce", "all_gather", "reduce_scatter", "broadcast", "all_to_all"]
res = {}
for rep in range(reps):
    for n in (2, 4):
        for tag, b in (("before", before), ("after", after)):
            with tempfile.TemporaryDirectory() as d:
                path = os.path.join(d, "out.json")
                cmd = [f"{b}/tools/chorus-run/chorus-run", "-n", str(n), "--", f"{b}/tools/chorus-bench/chorus-bench",
                       "--op", "all", "-b", "8", "-e", "16M", "-f", "16", "-n", "20", "-w", "3", "-c", "0", "--json", path]
                subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600, check=True)
                data = json.load(open(path))
                for row in data:
                    key = (row["op"], n, row["size"])
                    res.setdefault(key, {}).setdefault(tag, []).append(row["oop_time_us"])
print("| op | ranks | bytes | before (us) | after (us) | after/before |")
print("|---|---:|---:|---:|---:|---:|")
ratios = []
for key in sorted(res):
    v = res[key]
    if "before" not in v or "after" not in v: continue
    b, a = statistics.median(v["before"]), statistics.median(v["after"])
    ratios.append(a / b)
    print(f"| {key[0]} | {key[1]} | {key[2]} | {b:.1f} | {a:.1f} | {a/b:.2f} |")
import math
print(f"geomean after/before: {math.exp(sum(map(math.log, ratios))/len(ratios)):.3f} over {len(ratios)} cells")
