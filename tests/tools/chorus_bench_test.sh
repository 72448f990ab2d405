#!/bin/bash
# End-to-end check of chorus-bench under chorus-run:
#   chorus_bench_test.sh N chorus-run chorus-bench bench_json_check
# Every collective from 8 B to 64 KiB must pass the bit-exact check (#wrong 0 in
# every row), exit 0, and write valid JSON.
set -u
N=$1 RUN=$2 BENCH=$3 CHECK=$4
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

fail() { echo "FAIL (n=$N): $*" >&2; cat "$TMP/out" "$TMP/err" >&2 2>/dev/null; exit 1; }

"$RUN" -n "$N" --timeout 240 "$BENCH" --op all -b 8 -e 64K -n 5 -w 2 --json "$TMP/rows.json" \
  >"$TMP/out" 2>"$TMP/err"
rc=$?
cat "$TMP/out"
[ $rc -eq 0 ] || fail "exit status $rc"
grep -q "^\[0\] # Out of bounds values : 0 OK" "$TMP/out" || fail "no OK footer"
# One host: shared memory unless TCP is forced.
want=shm
[ "${CHORUS_TRANSPORT:-auto}" = tcp ] && want=tcp
grep -q "^\[0\] # transport: $want\$" "$TMP/out" || fail "no '# transport: $want' line"
# Data rows: "[0]" then numbers; the out-of-place and in-place #wrong are fields 10 and 14.
rows=$(grep -E '^\[0\] +[0-9]' "$TMP/out" | awk '$10 != "0" || $14 != "0"')
[ -z "$rows" ] || fail "rows with wrong results: $rows"
[ "$(grep -cE '^\[0\] +[0-9]' "$TMP/out")" -gt 40 ] || fail "too few rows"
"$CHECK" "$TMP/rows.json" all_reduce all_gather reduce_scatter broadcast reduce all_to_all \
  gather scatter || fail "bad JSON"

# A second dtype and reduction, to exercise the exact-value tables.
"$RUN" -n "$N" --timeout 120 "$BENCH" --op all_reduce -b 2 -e 4K -n 2 -w 1 -d bf16 -o avg \
  >"$TMP/out" 2>"$TMP/err" || fail "bf16 avg failed"
# Per-size algorithm overrides reach the selector (a bad range fails at init, naming it).
"$RUN" -n "$N" --timeout 120 "$BENCH" --op all_reduce -b 8 -e 64K -n 2 -w 1 \
  --algo "all_reduce:rhd@0-1K,ring@1K-" >"$TMP/out" 2>"$TMP/err" || fail "ranged --algo failed"
rows=$(grep -E '^\[0\] +[0-9]' "$TMP/out" | awk '$10 != "0" || $14 != "0"')
[ -z "$rows" ] || fail "ranged --algo: rows with wrong results: $rows"
if "$RUN" -n "$N" --timeout 60 "$BENCH" --op all_reduce -b 8 -e 8 -n 1 -w 0 \
    --algo "all_reduce:rhd@1K-8" >"$TMP/out" 2>"$TMP/err"; then
  fail "an empty size range was accepted"
fi
grep -q "CHORUS_ALGO='all_reduce:rhd@1K-8'.*is empty" "$TMP/out" "$TMP/err" ||
  fail "no message naming the empty range"
# --sync: a barrier before each timed iteration, each timed to its slowest rank; the rows
# are still checked and the JSON says which timing it holds.
"$RUN" -n "$N" --timeout 120 "$BENCH" --op all_reduce -b 8 -e 64K -f 64 -n 5 \
  -w 1 --sync --json "$TMP/sync.json" >"$TMP/out" 2>"$TMP/err" || fail "--sync failed"
grep -q "^\[0\] # sync: a barrier before every timed iteration" "$TMP/out" || fail "no '# sync' line"
"$CHECK" "$TMP/sync.json" all_reduce || fail "--sync: bad JSON"
[ "$(grep -c '"sync": true' "$TMP/sync.json")" -eq 3 ] || fail "--sync: rows without \"sync\": true"
grep -q '"sync": false' "$TMP/rows.json" || fail "rows without \"sync\": false"
echo "PASS (n=$N)"
