#!/bin/bash
# chorus-tune end to end, tiny (2 ranks, 2 sizes, 2 calls):
#   chorus_tune_test.sh chorus-run chorus-tune chorus-bench
# 1. the sweep prints a cell per (op, size) and the shares, and --write writes a table
#    that parses, with rows for the swept collectives at 2 ranks;
# 2. chorus-bench --estimate prints an estimate line per row;
# 3. a table is honoured: one forcing all_reduce to "ring" at 2 ranks makes the
#    all_reduces chorus-bench runs use ring (the statistics table names the algorithm),
#    and a table for another rank count changes nothing.
set -u
RUN=$1 TUNE=$2 BENCH=$3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; cat "$TMP/out" "$TMP/err" >&2 2>/dev/null; exit 1; }
export CHORUS_TUNING_FILE="$TMP/tuning.json"

"$RUN" -n 2 --timeout 120 "$TUNE" --op all_reduce,all_gather -b 1K -e 64K -f 64 -n 2 -w 1 \
  --rounds 1 --write "$TMP/table.json" >"$TMP/out" 2>"$TMP/err" || fail "chorus-tune failed"
cat "$TMP/out"
[ "$(grep -cE '^\[0\] +(all_reduce|all_gather) +2 ' "$TMP/out")" -eq 4 ] || fail "not 4 cells"
grep -qE '^\[0\] # all +cells +4 +within 10%: default' "$TMP/out" || fail "no share line"
python3 - "$TMP/table.json" <<'PY' || fail "bad table"
import json, sys
t = json.load(open(sys.argv[1]))
assert t["version"] == 1, t
ops = {(r["op"], r["ranks"]) for r in t["table"]}
assert ops == {("all_reduce", 2), ("all_gather", 2)}, ops
for r in t["table"]:
    assert isinstance(r["algo"], str) and r["lo"] >= 0, r
PY
[ -s "$CHORUS_TUNING_FILE" ] || fail "no tuning file written by the first init"

# A table forcing ring is honoured by the collectives themselves.
cat >"$TMP/ring.json" <<'JSON'
{"version": 1, "table": [{"op": "all_reduce", "ranks": 2, "lo": 0, "hi": null, "algo": "ring"}]}
JSON
CHORUS_TUNING_TABLE="$TMP/ring.json" "$RUN" -n 2 --timeout 120 "$BENCH" --op all_reduce \
  -b 1K -e 64K -f 8 -n 2 -w 1 --stats >"$TMP/out" 2>"$TMP/err" || fail "bench with table failed"
algos=$(grep -E '^\[0\] +all_reduce ' "$TMP/out" | awk '{print $NF}' | sort -u)
[ "$algos" = ring ] || fail "all_reduce rows ran '$algos', not only ring"
# ... and only for its rank count.
sed 's/"ranks": 2/"ranks": 3/' "$TMP/ring.json" >"$TMP/ring3.json"
CHORUS_TUNING_TABLE="$TMP/ring3.json" "$RUN" -n 2 --timeout 120 "$BENCH" --op all_reduce \
  -b 1K -e 64K -f 8 -n 2 -w 1 --stats >"$TMP/out" 2>"$TMP/err" || fail "bench with table 3 failed"
algos=$(grep -E '^\[0\] +all_reduce ' "$TMP/out" | awk '{print $NF}' | sort -u)
[ -n "$algos" ] || fail "no all_reduce statistics rows"
echo "$algos" | grep -qx ring && fail "a 3-rank table applied at 2 ranks"
# chorus-bench --estimate prints the choice and prediction next to each row.
"$RUN" -n 2 --timeout 120 "$BENCH" --op all_gather -b 1K -e 8K -f 8 -n 2 -w 1 --estimate \
  >"$TMP/out" 2>"$TMP/err" || fail "bench --estimate failed"
[ "$(grep -cE '^\[0\] # estimate: +[a-z_]+ +\((rules|model|table|override)\) predicted +[0-9.]+ us, measured' \
     "$TMP/out")" -eq 2 ] || fail "not 2 estimate lines"
# A malformed table fails init on every rank, naming the variable.
echo '{"table": [{"op": "all_reduce"}]}' >"$TMP/bad.json"
CHORUS_TUNING_TABLE="$TMP/bad.json" "$RUN" -n 2 --timeout 60 "$BENCH" --op all_reduce -b 8 -e 8 \
  -n 1 -w 0 >"$TMP/out" 2>"$TMP/err" && fail "a malformed table was accepted"
grep -q CHORUS_TUNING_TABLE "$TMP/err" || fail "the error does not name CHORUS_TUNING_TABLE"
echo PASS
