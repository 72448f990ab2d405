#!/bin/bash
# End-to-end check of chorus-info: chorus_info_test.sh chorus-info bench_json_check
set -u
INFO=$1 CHECK=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

CHORUS_TIMEOUT=42 "$INFO" >"$TMP/text" || fail "text output failed"
head -1 "$TMP/text" | grep -q "^Chorus [0-9]" || fail "no version line"
grep -Eq "^CHORUS_TIMEOUT +int +300 +42 +s " "$TMP/text" || fail "CHORUS_TIMEOUT row missing"
grep -Eq "^CHORUS_CONNECT_TIMEOUT .*\(unset\)" "$TMP/text" || fail "(unset) not shown"
"$INFO" --json >"$TMP/json" || fail "--json failed"
"$CHECK" "$TMP/json" --info CHORUS_TIMEOUT || fail "bad --json"
"$INFO" --markdown >"$TMP/md" || fail "--markdown failed"
grep -q '^| `CHORUS_TIMEOUT` | int | `300` | s | ' "$TMP/md" || fail "markdown row missing"
"$INFO" --json --markdown >/dev/null 2>&1 && fail "--json --markdown accepted"

# --cores: one line per pair of the affinity mask's processors, two measurements.
"$INFO" --cores --repeat 2 --every 0.1 >"$TMP/cores" || fail "--cores failed"
[ "$(grep -c '^# measurement [12], ' "$TMP/cores")" = 2 ] || fail "two measurements not printed"
n=$(nproc)
[ "$n" -gt 16 ] && pairs=$((n - 1)) || pairs=$((n * (n - 1) / 2))
[ "$(grep -Ec '^ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9.]+$' "$TMP/cores")" = $((2 * pairs)) ] ||
  fail "not $pairs measured pairs twice: $(cat "$TMP/cores")"
"$INFO" --cores --json >"$TMP/cores.json" || fail "--cores --json failed"
python3 - "$TMP/cores.json" "$pairs" <<'PY' || fail "bad --cores --json"
import json, sys
runs = json.load(open(sys.argv[1]))
assert len(runs) == 1 and len(runs[0]["pairs"]) == int(sys.argv[2]), runs
assert all(p["round_trip_ns"] > 0 and p["handover_us"] > 0 for p in runs[0]["pairs"]), runs
PY
taskset -c 0 "$INFO" --cores >"$TMP/one" 2>&1 && fail "--cores ran on one processor"
grep -q "needs at least 2 processors" "$TMP/one" || fail "one processor: $(cat "$TMP/one")"
"$INFO" --repeat 2 >/dev/null 2>&1 && fail "--repeat without --cores accepted"
"$INFO" --cores --repeat 0 >/dev/null 2>&1 && fail "--repeat 0 accepted"
echo PASS
