#!/bin/bash
# The cost of observation on the 5d stress pattern: chorus-stress --pattern 5d on RANKS
# ranks at SIZE, with nothing on, CHORUS_TIMELINE, and CHORUS_STATS=1, interleaved REPEATS
# times (the order of the modes rotates each repeat, so drift in the machine's load does
# not favour one); prints the median communication time per step (chorus-stress --json
# comm_ms_per_step) per mode, its change against "off", and the paired ratios: per repeat,
# mode / off of the adjacent runs, with their median and quartiles (the figure to trust
# on a shared machine).
#   bench/plots/observe_overhead.sh BUILD_DIR [RANKS=4] [SIZE=1M] [STEPS=60] [REPEATS=7]
set -eu
BUILD=$1 RANKS=${2:-4} SIZE=${3:-1M} STEPS=${4:-60} REPEATS=${5:-7}
RUN=$BUILD/tools/chorus-run/chorus-run STRESS=$BUILD/tools/chorus-stress/chorus-stress
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
modes=(off timeline stats)
for rep in $(seq "$REPEATS"); do
  k=$((rep % 3))
  for mode in "${modes[@]:$k}" "${modes[@]:0:$k}"; do
    envs=()
    [ "$mode" = timeline ] && envs=(CHORUS_TIMELINE="$TMP/tl.%r.json")
    [ "$mode" = stats ] && envs=(CHORUS_STATS=1)
    env "${envs[@]}" "$RUN" -n "$RANKS" "$STRESS" --pattern 5d --size "$SIZE" --steps "$STEPS" \
      --json "$TMP/$mode.$rep.json" >/dev/null 2>"$TMP/err" || { cat "$TMP/err" >&2; exit 1; }
  done
done
python3 - "$TMP" "$REPEATS" "$RANKS" "$SIZE" "$STEPS" <<'PY'
import json, statistics, sys
d, reps = sys.argv[1], int(sys.argv[2])
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
print(f"# 5d stress, {sys.argv[3]} ranks, {sys.argv[4]} per op, {sys.argv[5]} steps, {reps} interleaved repeats; {cpu}")
med = {}
for mode in ("off", "timeline", "stats"):
    runs = [json.load(open(f"{d}/{mode}.{r}.json"))["comm_ms_per_step"] for r in range(1, reps + 1)]
    med[mode] = statistics.median(runs)
    print(f"{mode:9s} median {med[mode]:8.3f} ms/step  runs " + " ".join(f"{x:.3f}" for x in runs))
runs = {m: [json.load(open(f"{d}/{m}.{r}.json"))["comm_ms_per_step"] for r in range(1, reps + 1)]
        for m in ("off", "timeline", "stats")}
for mode in ("timeline", "stats"):
    print(f"{mode:9s} vs off: {100 * (med[mode] / med['off'] - 1):+.1f}% (medians)")
for mode in ("timeline", "stats"):
    ratios = sorted(a / b for a, b in zip(runs[mode], runs["off"]))
    q = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
    print(f"{mode:9s} / off paired: median {100 * (q[1] - 1):+.1f}%, quartiles "
          f"{100 * (q[0] - 1):+.1f}% .. {100 * (q[2] - 1):+.1f}%, "
          f"{sum(r > 1 for r in ratios)} of {len(ratios)} slower")
PY
