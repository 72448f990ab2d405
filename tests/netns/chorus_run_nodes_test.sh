#!/bin/bash
# chorus-run --nnodes across network-namespace hosts:
#   chorus_run_nodes_test.sh CASE /path/to/chorus-run
#   numbering: 3 nodes with 2+1+2 ranks: global ranks numbered by node, local ranks per
#              node, one job id and store address everywhere, output tagged with global ranks.
#   failure:   3 nodes with 1+2+1 ranks; global rank 2 (node 1) exits 3 while the others
#              sleep: node 1's agent exits 3, the others exit 1 naming node 1 and rank 2,
#              all within a few seconds.
#   master_lost: node 0's agent is killed (SIGKILL; its ranks die with it): node 1's agent
#              loses the store and stops its ranks, exit 1, within 5 s.
#   agent_lost: node 1's agent is killed (its ranks die with it): node 0's agent hears no
#              heartbeat for 10 s and stops its ranks, exit 1, within 15 s (10 s silence,
#              then the 1.5 s report grace; node 0 does not wait for a silent node to leave).
set -u
CASE=$1 RUN=$2
source "$(dirname "$0")/netns_lib.sh"
netns_test_init "$CASE"
expect_grep() { grep -Eq -- "$1" "$2" || fail "'$1' not found in $(basename "$2")"; }

case "$CASE" in
numbering)
  netns_setup 3
  netns_job_start "$RUN" "$TMP" "2 1 2" --timeout 30 -- sh -c \
    'echo "r=$CHORUS_RANK n=$CHORUS_WORLD_SIZE l=$CHORUS_LOCAL_RANK a=$CHORUS_STORE_ADDR j=$CHORUS_JOB_ID"'
  netns_job_wait 40 || fail "agents still running after 40 s"
  [ "${NETNS_JOB_RCS[*]}" = "0 0 0" ] || fail "exit codes ${NETNS_JOB_RCS[*]}, expected 0 0 0"
  master="$(netns_addr 0):$NETNS_PORT"
  master_re=${master//./\\.}
  check() {  # node global local
    expect_grep "^\[$2\] r=$2 n=5 l=$3 a=$master_re j=[^ ]+$" "$TMP/out.$1"
  }
  check 0 0 0; check 0 1 1; check 1 2 0; check 2 3 0; check 2 4 1
  [ "$(cat "$TMP"/out.0 "$TMP"/out.1 "$TMP"/out.2 | wc -l)" -eq 5 ] || fail "expected 5 lines in all"
  [ "$(sed 's/.* j=//' "$TMP"/out.* | sort -u | wc -l)" -eq 1 ] || fail "job ids differ across nodes"
  expect_grep "chorus-run\[node 1\]: ranks 2\.\.2 of 5 on 3 nodes, store $master_re" "$TMP/err.1"
  expect_grep "chorus-run\[node 2\]: ranks 3\.\.4 of 5 on 3 nodes" "$TMP/err.2"
  ;;
failure)
  netns_setup 3
  start=$EPOCHREALTIME
  netns_job_start "$RUN" "$TMP" "1 2 1" --timeout 60 -- sh -c \
    'if [ "$CHORUS_RANK" = 2 ]; then sleep 1; exit 3; fi; exec sleep 30'
  netns_job_wait 40 || fail "agents still running after 40 s"
  took=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')
  [ "${NETNS_JOB_RCS[*]}" = "1 3 1" ] || fail "exit codes ${NETNS_JOB_RCS[*]}, expected 1 3 1"
  expect_grep "chorus-run\[node 1\]: rank 2 \(pid [0-9]+\) exited with status 3$" "$TMP/err.1"
  for k in 0 2; do
    expect_grep "chorus-run\[node $k\]: node 1 failed: rank 2 \(pid [0-9]+\) exited with status 3; stopping the ranks of this node" "$TMP/err.$k"
  done
  # rank 2 fails at ~1 s; the others stop 1.5 s (report grace) after they hear of it.
  echo "all agents exited after $took s"
  awk -v t="$took" 'BEGIN { exit !(t < 10) }' || fail "the job took $took s to stop (bound 10 s)"
  ;;
master_lost|agent_lost)
  netns_setup 2
  victim=0 survivor=1 bound=5
  [ "$CASE" = agent_lost ] && victim=1 survivor=0 bound=15
  netns_job_start "$RUN" "$TMP" "1 1" --timeout 60 -- sh -c 'touch "$0/ready$CHORUS_RANK"; exec sleep 60' "$TMP"
  for _ in $(seq 100); do [ -f "$TMP/ready0" ] && [ -f "$TMP/ready1" ] && break; sleep 0.1; done
  [ -f "$TMP/ready0" ] && [ -f "$TMP/ready1" ] || fail "the ranks did not start"
  agent=$(netns_pids_named "$victim" chorus-run)
  [ -n "$agent" ] || fail "no chorus-run in host $victim"
  killed_at=$EPOCHREALTIME
  kill -9 $agent
  netns_job_wait 40 || fail "still running 40 s after the kill"
  took=$(awk -v a="$killed_at" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')
  [ "${NETNS_JOB_RCS[$survivor]}" -eq 1 ] || fail "agent $survivor exited ${NETNS_JOB_RCS[$survivor]}, expected 1"
  if [ "$CASE" = master_lost ]; then
    expect_grep "chorus-run\[node 1\]: lost the connection to the store at $(netns_addr 0):$NETNS_PORT: .*; stopping the ranks of this node" "$TMP/err.1"
  else
    expect_grep "chorus-run\[node 0\]: node 1 failed: its chorus-run has not been heard of for 10 s \(killed, or its link is down\?\); stopping the ranks of this node" "$TMP/err.0"
  fi
  echo "agent $survivor exited $took s after agent $victim was killed"
  awk -v t="$took" -v b="$bound" 'BEGIN { exit !(t < b) }' || fail "took $took s (bound $bound s)"
  ;;
*) fail "unknown case" ;;
esac
echo "PASS ($CASE)"
