#!/bin/bash
# A host lost mid-run, across namespace hosts (chorus-run --nnodes, chorus-stress):
#   host_failure_test.sh CASE /path/to/chorus-run /path/to/chorus-stress
#   kill_host: host 1's two ranks (global 2 and 3) are killed with SIGKILL mid-run; each
#              surviving rank (0 and 1, on host 0) must fail with peer_lost naming rank 2
#              or 3 within 2 s of the kill, and every agent must exit non-zero.
#   link_down: host 1's link goes down mid-run (CHORUS_TIMEOUT=5); every rank (host 0's
#              and host 1's) must end in an error within CHORUS_TIMEOUT + 3 s, and every
#              agent must exit, non-zero, soon after. Nothing may hang.
# Times are measured from stamps on every output line (netns_stamp).
set -u
CASE=$1 RUN=$2 STRESS=$3
source "$(dirname "$0")/netns_lib.sh"
netns_test_init "$CASE"
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
below() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }

# Starts the job and returns once rank 0 reports progress (steps are running).
start_job() {
  netns_job_start "$RUN" "$TMP" "$1" --timeout 80 -- \
    "$STRESS" --steps 1000000 --size 256K --log-interval 1s
  for _ in $(seq 300); do
    grep -q "^\[0\] # elapsed" "$TMP/out.0" 2>/dev/null && return
    kill -0 "${NETNS_JOB_PIDS[0]}" 2>/dev/null || fail "the job ended before it made progress"
    sleep 0.1
  done
  fail "the job made no progress within 30 s"
}

# error_time FILE RANK: stamp of rank RANK's "failed in step" line (empty when none).
error_time() {
  grep -E "^[0-9.]+ \[$2\] chorus-stress: rank $2 failed in step [0-9]+: " "$1" | head -1 | cut -d' ' -f1
}

case "$CASE" in
kill_host)
  netns_setup 2
  start_job "2 2"
  victims=$(netns_pids_named 1 chorus-stress)
  [ "$(echo "$victims" | wc -w)" -eq 2 ] || fail "expected 2 chorus-stress ranks on host 1: $victims"
  killed_at=$EPOCHREALTIME
  kill -9 $victims
  netns_job_wait 40 || fail "still running 40 s after the kill"
  [ "${NETNS_JOB_RCS[0]}" -ne 0 ] && [ "${NETNS_JOB_RCS[1]}" -eq 137 ] ||
    fail "exit codes ${NETNS_JOB_RCS[*]}, expected non-zero and 137"
  grep -Eq "chorus-run\[node 1\]: rank [23] \(pid [0-9]+\) was killed by signal SIGKILL" "$TMP/err.1" ||
    fail "agent 1 did not name a killed rank"
  for r in 0 1; do
    t=$(error_time "$TMP/err.0" $r)
    [ -n "$t" ] || fail "rank $r printed no error"
    line=$(grep -E "^[0-9.]+ \[$r\] chorus-stress: rank $r failed in step" "$TMP/err.0" | head -1)
    [[ "$line" =~ peer_lost ]] || fail "rank $r: not peer_lost: $line"
    [[ "$line" =~ peer\ rank\ [23]\  ]] || fail "rank $r: does not name rank 2 or 3: $line"
    echo "rank $r failed $(elapsed "$killed_at" "$t") s after the kill: ${line#* }"
    below "$(elapsed "$killed_at" "$t")" 2 || fail "rank $r took over 2 s to fail"
  done
  ;;
link_down)
  netns_setup 2
  export CHORUS_TIMEOUT=5
  start_job "2 1"
  down_at=$EPOCHREALTIME
  netns_link_down 1
  netns_job_wait 40 || fail "still running 40 s after the link went down"
  ended_at=$EPOCHREALTIME
  [ "${NETNS_JOB_RCS[0]}" -ne 0 ] && [ "${NETNS_JOB_RCS[1]}" -ne 0 ] ||
    fail "exit codes ${NETNS_JOB_RCS[*]}, expected both non-zero"
  for r in 0 1 2; do
    f="$TMP/err.0"; [ $r = 2 ] && f="$TMP/err.1"
    t=$(error_time "$f" $r)
    [ -n "$t" ] || fail "rank $r printed no error"
    line=$(grep -E "^[0-9.]+ \[$r\] chorus-stress: rank $r failed in step" "$f" | head -1)
    echo "rank $r failed $(elapsed "$down_at" "$t") s after the link went down: ${line#* }"
    # A deadline. Rank 2 can only name a rank across the link; host 0's ranks name the
    # first deadline to pass on their host, which may be rank 1's wait for rank 0 (itself
    # stuck on rank 2), so they are not required to name rank 2.
    [[ "$line" =~ failed\ in\ step\ [0-9]+:\ timeout: ]] || fail "rank $r: not a timeout: $line"
    if [ $r = 2 ]; then
      [[ "$line" =~ peer\ rank\ [01]\  ]] || fail "rank 2: does not name rank 0 or 1: $line"
    fi
    below "$(elapsed "$down_at" "$t")" 8 || fail "rank $r took over CHORUS_TIMEOUT + 3 s to fail"
  done
  echo "all agents exited $(elapsed "$down_at" "$ended_at") s after the link went down"
  sed 's/^[0-9.]* //' "$TMP/err.1" | grep '^chorus-run' 
  below "$(elapsed "$down_at" "$ended_at")" 20 || fail "agents took over 20 s to exit"
  ;;
*) fail "unknown case" ;;
esac
echo "PASS ($CASE)"
