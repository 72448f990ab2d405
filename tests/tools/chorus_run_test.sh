#!/bin/bash
# End-to-end checks of chorus-run: chorus_run_test.sh CASE /path/to/chorus-run
# Each case launches small shell "ranks" and checks output, exit codes and cleanup.
set -u
CASE=$1
RUN=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
ulimit -c 0

fail() { echo "FAIL ($CASE): $*" >&2; echo "--- stdout:" >&2; cat "$TMP/out" >&2 2>/dev/null;
         echo "--- stderr:" >&2; cat "$TMP/err" >&2 2>/dev/null; exit 1; }
expect_rc() { [ "$1" -eq "$2" ] || fail "exit status $1, expected $2"; }
expect_grep() { grep -q -- "$1" "$2" || fail "'$1' not found in $2"; }

case "$CASE" in
env)
  # Other launchers' variables must not reach the ranks; every rank sees its own env.
  RANK=7 WORLD_SIZE=9 OMPI_COMM_WORLD_RANK=1 PMI_RANK=2 SLURM_PROCID=3 CHORUS_TIMEOUT=33 \
    "$RUN" -n 3 sh -c 'echo "r=$CHORUS_RANK n=$CHORUS_WORLD_SIZE l=$CHORUS_LOCAL_RANK" \
      "a=$CHORUS_STORE_ADDR j=$CHORUS_JOB_ID t=$CHORUS_TIMEOUT" \
      "x=${RANK-}${WORLD_SIZE-}${OMPI_COMM_WORLD_RANK-}${PMI_RANK-}${SLURM_PROCID-}"' \
    >"$TMP/out" 2>"$TMP/err"
  expect_rc $? 0
  [ "$(wc -l <"$TMP/out")" -eq 3 ] || fail "expected 3 lines"
  for r in 0 1 2; do
    grep -Eq "^\[$r\] r=$r n=3 l=$r a=127\.0\.0\.1:[0-9]+ j=[^ ]+ t=33 x=$" "$TMP/out" ||
      fail "bad line for rank $r"
  done
  [ "$(sed 's/.* j=\([^ ]*\).*/\1/' "$TMP/out" | sort -u | wc -l)" -eq 1 ] || fail "job ids differ"
  ;;
exit_code)
  "$RUN" -n 3 sh -c 'if [ "$CHORUS_RANK" = 1 ]; then exit 3; fi; exec sleep 30' \
    >"$TMP/out" 2>"$TMP/err"
  expect_rc $? 3
  expect_grep "chorus-run: rank 1 (pid [0-9]*) exited with status 3" "$TMP/err"
  ;;
signal)
  # Rank 1 dies of SIGSEGV once rank 0 (a sleep ignoring SIGTERM) has written its pid.
  start=$(date +%s)
  "$RUN" -n 2 sh -c '
    if [ "$CHORUS_RANK" = 0 ]; then echo $$ > "$0/pid.tmp"; mv "$0/pid.tmp" "$0/pid";
      trap "" TERM; exec sleep 60; fi
    while [ ! -f "$0/pid" ]; do sleep 0.05; done; kill -SEGV $$' "$TMP" \
    >"$TMP/out" 2>"$TMP/err"
  expect_rc $? 139
  expect_grep "chorus-run: rank 1 (pid [0-9]*) was killed by signal SIGSEGV" "$TMP/err"
  pid=$(cat "$TMP/pid")
  kill -0 "$pid" 2>/dev/null && fail "rank 0 (pid $pid) outlived chorus-run"
  [ $(( $(date +%s) - start )) -lt 20 ] || fail "took too long to stop the sibling"
  ;;
timeout)
  start=$(date +%s)
  "$RUN" -n 2 --timeout 1 sleep 30 >"$TMP/out" 2>"$TMP/err"
  expect_rc $? 124
  expect_grep "timeout" "$TMP/err"
  [ $(( $(date +%s) - start )) -lt 10 ] || fail "timeout not enforced"
  ;;
forward_sigterm)
  "$RUN" -n 2 sh -c 'trap "echo got-TERM; exit 0" TERM; touch "$0/ready$CHORUS_RANK";
                     sleep 30 & wait' "$TMP" >"$TMP/out" 2>"$TMP/err" &
  run_pid=$!
  for _ in $(seq 100); do [ -f "$TMP/ready0" ] && [ -f "$TMP/ready1" ] && break; sleep 0.1; done
  kill -TERM "$run_pid"
  wait "$run_pid"
  expect_rc $? 143
  [ "$(grep -c 'got-TERM' "$TMP/out")" -eq 2 ] || fail "SIGTERM not forwarded to both ranks"
  ;;
partial_line)
  "$RUN" -n 2 sh -c 'printf "line1\nno-newline-$CHORUS_RANK"; printf "err-$CHORUS_RANK\n" >&2' \
    >"$TMP/out" 2>"$TMP/err"
  expect_rc $? 0
  for r in 0 1; do
    expect_grep "^\[$r\] no-newline-$r$" "$TMP/out"
    expect_grep "^\[$r\] err-$r$" "$TMP/err"
  done
  "$RUN" -n 2 --no-tag-output sh -c 'echo plain' >"$TMP/out" 2>"$TMP/err"
  expect_rc $? 0
  [ "$(grep -c '^plain$' "$TMP/out")" -eq 2 ] || fail "--no-tag-output still tags"
  ;;
usage)
  "$RUN" >"$TMP/out" 2>"$TMP/err"; expect_rc $? 2
  "$RUN" -n 2 >"$TMP/out" 2>"$TMP/err"; expect_rc $? 2
  "$RUN" -n 0 true >"$TMP/out" 2>"$TMP/err"; expect_rc $? 2
  "$RUN" -n 2 --bogus true >"$TMP/out" 2>"$TMP/err"; expect_rc $? 2
  "$RUN" --help >"$TMP/out" 2>"$TMP/err"; expect_rc $? 0
  ;;
bind)
  # --bind cpu: local rank i on the i-th processor of chorus-run's mask, wrapping around;
  # none: the whole mask; core under a one-processor mask: that processor for every rank.
  read -r A B < <(python3 -c 'import os; c = sorted(os.sched_getaffinity(0)); print(c[0], c[-1])')
  allowed='echo "r=$CHORUS_RANK $(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)"'
  taskset -c "$A,$B" "$RUN" -n 3 --bind cpu sh -c "$allowed" >"$TMP/out" 2>"$TMP/err"
  expect_rc $? 0
  if [ "$A" = "$B" ]; then want=("$A" "$A" "$A"); else want=("$A" "$B" "$A"); fi
  for r in 0 1 2; do expect_grep "^\[$r\] r=$r ${want[$r]}\$" "$TMP/out"; done
  taskset -c "$A,$B" "$RUN" -n 2 --bind none sh -c "$allowed" >"$TMP/out" 2>"$TMP/err"
  expect_rc $? 0
  mask=$(taskset -c "$A,$B" sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
  for r in 0 1; do expect_grep "^\[$r\] r=$r $mask\$" "$TMP/out"; done
  taskset -c "$B" "$RUN" -n 2 --bind core sh -c "$allowed" >"$TMP/out" 2>"$TMP/err"
  expect_rc $? 0
  for r in 0 1; do expect_grep "^\[$r\] r=$r $B\$" "$TMP/out"; done
  "$RUN" -n 2 --bind socket true >"$TMP/out" 2>"$TMP/err"; expect_rc $? 2
  expect_grep "socket not in" "$TMP/err"
  ;;
exec_failure)
  "$RUN" -n 2 /nonexistent/program >"$TMP/out" 2>"$TMP/err"
  expect_rc $? 127
  expect_grep "cannot execute '/nonexistent/program'" "$TMP/err"
  ;;
nodes_usage)
  "$RUN" --nnodes 2 -n 1 true >"$TMP/out" 2>"$TMP/err"; expect_rc $? 2
  expect_grep "go together" "$TMP/err"
  "$RUN" --nnodes 2 --node-rank 2 --master 127.0.0.1:1 -n 1 true >"$TMP/out" 2>"$TMP/err"
  expect_rc $? 2; expect_grep "is not below --nnodes 2" "$TMP/err"
  "$RUN" --nnodes 2 --node-rank 0 --master nope -n 1 true >"$TMP/out" 2>"$TMP/err"
  expect_rc $? 2; expect_grep "is not HOST:PORT" "$TMP/err"
  "$RUN" --nnodes 2 --node-rank 0 --master 127.0.0.1:1 --host h -n 1 true >"$TMP/out" 2>"$TMP/err"
  expect_rc $? 2; expect_grep "does not apply" "$TMP/err"
  ;;
nodes_loopback)
  # Two agents on this host (the netns tests do it across namespace hosts): 2+1 ranks.
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  prog='echo "r=$CHORUS_RANK n=$CHORUS_WORLD_SIZE l=$CHORUS_LOCAL_RANK a=$CHORUS_STORE_ADDR"'
  # Node 1 first: it retries until node 0's store is up.
  "$RUN" --nnodes 2 --node-rank 1 --master 127.0.0.1:$port -n 1 sh -c "$prog" \
    >"$TMP/out1" 2>"$TMP/err1" &
  sleep 1
  "$RUN" --nnodes 2 --node-rank 0 --master 127.0.0.1:$port -n 2 sh -c "$prog" \
    >"$TMP/out" 2>"$TMP/err"
  expect_rc $? 0
  wait $!; expect_rc $? 0
  expect_grep "^\[0\] r=0 n=3 l=0 a=127.0.0.1:$port$" "$TMP/out"
  expect_grep "^\[1\] r=1 n=3 l=1 a=127.0.0.1:$port$" "$TMP/out"
  expect_grep "^\[2\] r=2 n=3 l=0 a=127.0.0.1:$port$" "$TMP/out1"
  # A node that never comes: node 0 gives up after --join-timeout, naming it.
  "$RUN" --nnodes 3 --node-rank 0 --master 127.0.0.1:$port --join-timeout 1 -n 1 true \
    >"$TMP/out" 2>"$TMP/err"
  expect_rc $? 1
  expect_grep "chorus-run\[node 0\]: not every node joined within 1 s (--join-timeout); missing: nodes 1, 2" "$TMP/err"
  ;;
*)
  fail "unknown case"
  ;;
esac
echo "PASS ($CASE)"
