#!/bin/bash
# The collectives grid across namespace hosts with uneven rank counts:
#   bench_grid_test.sh "C0 C1 ..." /path/to/chorus-run /path/to/chorus-bench
# Host k runs Ck ranks (chorus-run --nnodes). Every op of chorus-bench's check mode from
# 8 B to 1 MiB must give #wrong 0 and exit 0; the header must name shm+tcp (host 0 has 2+
# ranks) and every rank's INIT log must show the host split (shm among its host's ranks,
# tcp to the others).
set -u
COUNTS=$1 RUN=$2 BENCH=$3
source "$(dirname "$0")/netns_lib.sh"
netns_test_init "$COUNTS"

counts=($COUNTS)
hosts=${#counts[@]}
netns_setup "$hosts"
start=$SECONDS
CHORUS_DEBUG=INFO CHORUS_DEBUG_SUBSYS=INIT netns_job_start "$RUN" "$TMP" "$COUNTS" --timeout 100 -- \
  "$BENCH" --op all -b 8 -e 1M -f 8 -n 3 -w 1 -c 1
netns_job_wait 110 || fail "still running after 110 s"
echo "bench grid on $hosts hosts ($COUNTS ranks) took $(( SECONDS - start )) s"
cat "$TMP/out.0"
for (( k = 0; k < hosts; k++ )); do
  [ "${NETNS_JOB_RCS[$k]}" -eq 0 ] || fail "agent $k exited ${NETNS_JOB_RCS[$k]}"
done
grep -q "^\[0\] # transport: shm+tcp$" "$TMP/out.0" || fail "no '# transport: shm+tcp' header"
grep -q "^\[0\] # Out of bounds values : 0 OK" "$TMP/out.0" || fail "no OK footer"
# Data rows: "[0]" then numbers; the out-of-place and in-place #wrong are fields 10 and 14.
rows=$(grep -cE '^\[0\] +[0-9]' "$TMP/out.0")
bad=$(grep -E '^\[0\] +[0-9]' "$TMP/out.0" | awk '$10 != "0" || $14 != "0"')
[ -z "$bad" ] || fail "rows with wrong results: $bad"
# 8 ops x sizes 8 B .. 256 KiB (factor 8): 6 sizes, or 5 where 8 B holds fewer elements
# than ranks (all_gather, reduce_scatter, all_to_all, gather, scatter).
per_op=$(awk '/^\[0\] # Collective: / { op = $4 } /^\[0\] +[0-9]/ { n[op]++ }
              END { for (o in n) print o, n[o] }' "$TMP/out.0" | sort)
echo "rows per op: $(echo $per_op)"
want="all_gather 5 all_reduce 6 all_to_all 5 broadcast 6 gather 5 reduce 6 reduce_scatter 5 scatter 5"
[ "$(echo $per_op)" = "$want" ] || fail "rows per op: $(echo $per_op); expected $want"
[ "$rows" -eq 43 ] || fail "$rows data rows, expected 43"
# Each rank's transport set-up matches its host (INIT log, stderr of its host's agent).
rank=0
for (( k = 0; k < hosts; k++ )); do
  for (( l = 0; l < counts[k]; l++ )); do
    if [ "${counts[$k]}" -ge 2 ]; then
      want="rank $rank: ranks span hosts: shm among the ${counts[$k]} ranks on 'host$k', tcp to the others"
    else
      want="rank $rank: ranks span hosts and none shares 'host$k': using tcp"
    fi
    grep -qF "$want" "$TMP/err.$k" || fail "host $k: no '$want'"
    rank=$(( rank + 1 ))
  done
done
echo "PASS ($COUNTS)"
