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
echo PASS
