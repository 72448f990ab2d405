#!/bin/bash
# End-to-end checks of chorus-stress under chorus-run:
#   chorus_stress_test.sh CASE chorus-run chorus-stress
# Clean runs must exit 0 with every rank finishing the same number of steps; injected
# faults and the naive per-rank deadline must end, bounded, in the precise error on the
# surviving ranks and a non-zero exit.
set -u
CASE=$1 RUN=$2 STRESS=$3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
ulimit -c 0

fail() { echo "FAIL ($CASE): $*" >&2; echo "--- stdout:" >&2; cat "$TMP/out" >&2 2>/dev/null;
         echo "--- stderr:" >&2; cat "$TMP/err" >&2 2>/dev/null; exit 1; }
expect_grep() { grep -Eq -- "$1" "$2" || fail "'$1' not found in $2"; }
run() { "$RUN" -n "$1" --timeout 120 "$STRESS" "${@:2}" >"$TMP/out" 2>"$TMP/err"; }
# Every one of $1 ranks printed "finished N steps" with the same N; echoes N.
same_steps() {
  local n=$1 counts
  counts=$(sed -n 's/^\[[0-9]*\] chorus-stress: rank [0-9]* finished \([0-9]*\) steps$/\1/p' "$TMP/out")
  [ "$(echo "$counts" | grep -c .)" -eq "$n" ] || fail "not every rank finished: $counts"
  [ "$(echo "$counts" | sort -u | wc -l)" -eq 1 ] || fail "ranks ran different step counts: $counts"
  echo "$counts" | head -1
}
expect_failure() {  # $1 = rc, $2 = error kind regex, $3 = rank the error must name
  [ "$1" -ne 0 ] || fail "expected a non-zero exit"
  [ "$1" -ne 124 ] || fail "the job hung until chorus-run's timeout"
  expect_grep "chorus-stress: rank [0-9]+ failed in step [0-9]+: $2" "$TMP/err"
  expect_grep "rank $3" "$TMP/err"
}

case "$CASE" in
steps)
  run 4 --steps 12 --size 256K --json "$TMP/summary.json"; rc=$?
  [ $rc -eq 0 ] || fail "exit status $rc"
  [ "$(same_steps 4)" -eq 12 ] || fail "expected 12 steps"
  for op in "tp all_reduce" "dp all_reduce" "ep all_to_all" "sp all_gather" "pp all_gather"; do
    expect_grep "^\[0\] $op +12 " "$TMP/out"
  done
  expect_grep "wrong results on all ranks: 0" "$TMP/out"
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['steps']==12 and d['wrong']==0 and len(d['ops'])==5" \
    "$TMP/summary.json" || fail "bad JSON summary"
  ;;
duration)
  # Ranks stop together on an agreed deadline: the same step count everywhere.
  run 4 --duration 5s --size 64K --log-interval 1s; rc=$?
  [ $rc -eq 0 ] || fail "exit status $rc"
  steps=$(same_steps 4)
  [ "$steps" -gt 0 ] || fail "no steps ran"
  expect_grep "^\[0\] # elapsed 0:00:0[1-9] +steps" "$TMP/out"
  ;;
groups)
  run 4 --groups tp=2,dp=rest --steps 6 --size 128K; rc=$?
  [ $rc -eq 0 ] || fail "exit status $rc"
  expect_grep "tp=2 \(group\), dp=2 \(group\), ep=4 \(world\)" "$TMP/out"
  same_steps 4 >/dev/null
  ;;
random)
  run 3 --pattern random --seed 11 --steps 40 --size 512K; rc=$?
  [ $rc -eq 0 ] || fail "exit status $rc"
  same_steps 3 >/dev/null
  expect_grep "wrong results on all ranks: 0" "$TMP/out"
  ;;
serial)
  run 2 --serial --pattern all_to_all --steps 5 --size 1M; rc=$?
  [ $rc -eq 0 ] || fail "exit status $rc"
  same_steps 2 >/dev/null
  ;;
unsafe_deadline)
  # The naive loop: rank r stops r*600ms after the others' deadline... rank 0 first,
  # while the others go on into the next step with it: they must fail naming rank 0.
  run 4 --duration 2s --unsafe-local-deadline --deadline-skew 600ms --size 64K; rc=$?
  expect_failure $rc "peer_lost" 0
  ;;
inject_exit)
  run 4 --steps 1000 --size 64K --inject exit@1:5; rc=$?
  expect_failure $rc "peer_lost" 1
  ;;
inject_kill)
  run 4 --steps 1000 --size 64K --inject kill@2:5; rc=$?
  expect_failure $rc "peer_lost" 2
  ;;
inject_stall)
  run 4 --steps 1000 --size 64K --timeout 2s --inject stall@3:4; rc=$?
  expect_failure $rc "timeout" 3
  ;;
inject_desync)
  run 4 --steps 1000 --size 64K --inject desync@2:3; rc=$?
  expect_failure $rc "desync" 2
  ;;
usage)
  "$STRESS" --pattern nope >"$TMP/out" 2>"$TMP/err"; rc=$?
  [ $rc -eq 2 ] || fail "exit status $rc for a bad pattern"
  expect_grep "unknown pattern 'nope'" "$TMP/err"
  run 3 --groups tp=2 --steps 1; rc=$?
  [ $rc -eq 2 ] || fail "exit status $rc for groups that do not tile 3 ranks"
  ;;
*) fail "unknown case" ;;
esac
echo "PASS ($CASE)"
