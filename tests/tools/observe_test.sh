#!/bin/bash
# End-to-end checks of issue 13's tools:
#   observe_test.sh CASE chorus-run chorus-stress chorus-bench chorus-trace
# straggler: 4 ranks of chorus-stress --pattern 5d with CHORUS_TIMELINE and rank 2 slowed
#   (--delay): the merged trace is valid JSON with 4 processes and phases, and
#   chorus-trace report (JSON) names rank 2 as the straggler.
# stats_table: CHORUS_STATS=1 makes rank 0 print every rank's table at destruction.
# stats_vs_bench: chorus-bench --stats: the mean all_reduce time of the timed iterations
#   from Communicator::stats() agrees with chorus-bench's own timing within 10% (medians
#   over 3 runs x 2 modes).
set -u
CASE=$1 RUN=$2 STRESS=$3 BENCH=$4 TRACE=$5
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
ulimit -c 0

fail() { echo "FAIL ($CASE): $*" >&2; echo "--- stdout:" >&2; cat "$TMP/out" >&2 2>/dev/null;
         echo "--- stderr:" >&2; tail -50 "$TMP/err" >&2 2>/dev/null; exit 1; }
expect_grep() { grep -Eq -- "$1" "$2" || fail "'$1' not found in $2"; }

case "$CASE" in
straggler)
  transport=${6:-auto}
  CHORUS_TRANSPORT=$transport CHORUS_TIMELINE="$TMP/tl.%r.json" "$RUN" -n 4 --timeout 120 \
    "$STRESS" --pattern 5d --size 64K --steps 40 --delay 2:4ms >"$TMP/out" 2>"$TMP/err" ||
    fail "chorus-stress exit status $?"
  for r in 0 1 2 3; do [ -s "$TMP/tl.$r.json" ] || fail "no timeline for rank $r"; done
  "$TRACE" merge -o "$TMP/merged.json" "$TMP"/tl.*.json >>"$TMP/out" 2>>"$TMP/err" ||
    fail "merge failed"
  "$TRACE" report --json "$TMP/report.json" "$TMP/merged.json" >>"$TMP/out" 2>>"$TMP/err" ||
    fail "report failed"
  python3 - "$TMP/merged.json" "$TMP/report.json" <<'PY' >>"$TMP/out" 2>>"$TMP/err" || fail "checks failed"
import json, sys
merged = json.load(open(sys.argv[1]))
report = json.load(open(sys.argv[2]))
ev = merged["traceEvents"]
pids = {e["pid"] for e in ev if e.get("ph") == "X"}
assert pids == {0, 1, 2, 3}, f"processes {pids}"
names = {e["name"] for e in ev if e.get("cat") == "chorus"}
assert {"all_reduce", "all_to_all", "all_gather"} <= names, names
assert any(e.get("name") == "arrival wait" for e in ev), "no arrival-wait phase"
assert any(e.get("name") == "transfer" for e in ev), "no transfer phase"
assert len(merged["otherData"]["chorus_ranks"]) == 4
assert report["straggler"] == 2, f"straggler {report['straggler']}: {report['stragglers']}"
top = report["stragglers"][0]
assert top["share"] > 0.5, f"rank 2 last in only {top['share']:.0%}"
assert top["mean_late_us"] > 1000, f"rank 2 only {top['mean_late_us']} us late"
print("straggler", report["straggler"], "share", top["share"], "late_us", top["mean_late_us"])
PY
  expect_grep "# straggler: rank 2" "$TMP/out"
  ;;
stats_table)
  CHORUS_STATS=1 "$RUN" -n 2 --timeout 120 "$STRESS" --pattern all_reduce --size 256K \
    --steps 20 >"$TMP/out" 2>"$TMP/err" || fail "chorus-stress exit status $?"
  expect_grep "chorus stats v1 \(comm0, 2 ranks, 2 reported\)" "$TMP/err"
  expect_grep "all_reduce +256K +20 " "$TMP/err"
  expect_grep "last_rank" "$TMP/err"
  ;;
stats_vs_bench)
  # Medians of 3 runs x 2 modes of 300 timed iterations (a loaded 2-core machine is noisy).
  for i in 1 2 3; do
    "$RUN" -n 2 --timeout 120 "$BENCH" --op all_reduce -b 1M -e 1M -n 300 -w 20 -c 0 \
      --json "$TMP/bench$i.json" --stats --stats-json "$TMP/stats$i.json" >"$TMP/out" 2>"$TMP/err" ||
      fail "chorus-bench exit status $?"
  done
  expect_grep "statistics of rank 0" "$TMP/out"
  python3 - "$TMP" <<'PY' >>"$TMP/out" 2>>"$TMP/err" || fail "stats and bench disagree"
import json, statistics, sys
d = sys.argv[1]
bench, stats = [], []
for i in (1, 2, 3):
    b = json.load(open(f"{d}/bench{i}.json"))[0]
    for mode in ("oop_", "ip_"):
        bench.append(b[mode + "time_us"])
        stats.append(b[mode + "stats_time_us"])  # the timed iterations, from stats()
    row = [r for r in json.load(open(f"{d}/stats{i}.json"))
           if r["op"] == "all_reduce" and r["size_class"] == 1 << 20][0]
    assert row["count"] == 2 * (300 + 20), row
b, s = statistics.median(bench), statistics.median(stats)
print(f"bench {b:.1f} us, stats {s:.1f} us, ratio {s / b:.3f}; runs bench {bench} stats {stats}")
assert abs(s - b) <= 0.10 * b, f"stats {s:.1f} us vs bench {b:.1f} us"
PY
  ;;
*)
  echo "unknown case $CASE" >&2; exit 2 ;;
esac
exit 0
