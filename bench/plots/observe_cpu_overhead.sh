#!/bin/bash
# The timeline's cost in CPU time, which a loaded machine disturbs far less than wall time:
# chorus-stress --pattern 5d on RANKS ranks at SIZE for STEPS steps, without and with
# CHORUS_TIMELINE, in adjacent pairs (the order alternates) REPEATS times; each rank runs
# under `perf stat -e task-clock` (CPU time of all its threads, spinning included). Prints
# per pair the job's CPU time (sum over ranks) and the paired ratio timeline / off, then
# the median ratio with quartiles and the median extra CPU per job and per operation.
#   bench/plots/observe_cpu_overhead.sh BUILD_DIR [RANKS=2] [SIZE=1M] [STEPS=100] [REPEATS=30]
set -eu
BUILD=$1 RANKS=${2:-2} SIZE=${3:-1M} STEPS=${4:-100} REPEATS=${5:-30}
RUN=$BUILD/tools/chorus-run/chorus-run STRESS=$BUILD/tools/chorus-stress/chorus-stress
command -v perf >/dev/null || { echo "needs perf (linux-perf)" >&2; exit 2; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
run() {  # mode rep
  local envs=()
  [ "$1" = timeline ] && envs=(CHORUS_TIMELINE="$TMP/tl.%r.json")
  env "${envs[@]}" "$RUN" -n "$RANKS" sh -c "exec perf stat -x, -e task-clock \
    -o $TMP/cpu.$1.$2.\$CHORUS_RANK $STRESS --pattern 5d --size $SIZE --steps $STEPS" \
    >/dev/null 2>"$TMP/err" || { cat "$TMP/err" >&2; exit 1; }
  rm -f "$TMP"/tl.*.json
}
for rep in $(seq "$REPEATS"); do
  if [ $((rep % 2)) = 1 ]; then run off "$rep"; run timeline "$rep"
  else run timeline "$rep"; run off "$rep"; fi
done
python3 - "$TMP" "$REPEATS" "$RANKS" "$SIZE" "$STEPS" <<'PY'
import glob, statistics, sys
d, reps, ranks, size, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
def cpu_ms(mode, rep):
    total = 0.0
    for f in glob.glob(f"{d}/cpu.{mode}.{rep}.*"):
        for line in open(f):
            if ",task-clock," in line or line.split(",")[2:3] == ["task-clock"]:
                total += float(line.split(",")[0])
    return total
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
ops = ranks * steps * 5  # operations run by all ranks together (5 per step per rank)
print(f"# 5d stress, {ranks} ranks, {size} per op, {steps} steps, {reps} adjacent pairs; {cpu}")
ratios, extra, job = [], [], []
for r in range(1, reps + 1):
    off, tl = cpu_ms("off", r), cpu_ms("timeline", r)
    ratios.append(tl / off)
    extra.append((tl - off) * 1000 / ops)
    job.append(tl - off)
    print(f"pair {r:2d}  cpu off {off:8.1f} ms  timeline {tl:8.1f} ms  ratio {tl / off:.3f}")
q = statistics.quantiles(ratios, n=4)
e = statistics.quantiles(extra, n=4)
print(f"timeline / off CPU: median {100 * (q[1] - 1):+.1f}%, quartiles {100 * (q[0] - 1):+.1f}% .. "
      f"{100 * (q[2] - 1):+.1f}%, {sum(x > 1 for x in ratios)} of {len(ratios)} higher")
print(f"extra CPU per job: median {statistics.median(job):+.1f} ms (fixed costs: clock alignment "
      f"at init, writing the files at the end, plus the per-operation cost; run two step "
      f"counts to separate them)")
print(f"extra CPU per operation (per rank, fixed costs included): median {e[1]:+.1f} us, quartiles {e[0]:+.1f} .. {e[2]:+.1f} us")
PY
