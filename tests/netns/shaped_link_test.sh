#!/bin/bash
# Links shaped with tc tbf (netns_setup --rate): shaped_link_test.sh chorus-run chorus-bench
# Two hosts, one rank each, every veth limited to 200 Mbit/s (25 MB/s): an 8 MiB
# all_reduce is right (#wrong 0) and its bus bandwidth stays under the link rate
# (busbw <= 0.025 GB/s; unshaped, this path gives 0.2-0.4 GB/s here).
set -u
RUN=$1 BENCH=$2
source "$(dirname "$0")/netns_lib.sh"
netns_test_init "shaped_link"

netns_setup 2 --rate 200mbit --burst 256k --latency 50ms
netns_exec 1 tc qdisc show dev eth0 | grep -q "tbf .*rate 200Mbit" || fail "no tbf qdisc on host 1"
netns_job_start "$RUN" "$TMP" "1 1" --timeout 50 -- \
  "$BENCH" --op all_reduce -b 8M -e 8M -n 3 -w 1 -c 1
netns_job_wait 60 || fail "still running after 60 s"
[ "${NETNS_JOB_RCS[*]}" = "0 0" ] || fail "exit codes ${NETNS_JOB_RCS[*]}"
row=$(grep -E '^\[0\] +[0-9]' "$TMP/out.0")
echo "$row"
# Fields: [0] size count type redop root time algbw busbw #wrong time algbw busbw #wrong
echo "$row" | awk '{ exit !($10 == 0 && $14 == 0) }' || fail "wrong results"
echo "$row" | awk '{ exit !($9 <= 0.025 && $13 <= 0.025 && $9 > 0.002) }' ||
  fail "busbw outside (0.002, 0.025] GB/s on a 200 Mbit/s link"
echo "PASS (shaped_link)"
