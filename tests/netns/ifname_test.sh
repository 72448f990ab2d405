#!/bin/bash
# CHORUS_SOCKET_IFNAME with two interfaces per host:
#   ifname_test.sh /path/to/chorus-run /path/to/chorus-bench
# Two hosts, one rank each, each host with eth0 (network 1, where the store is) and eth1
# (network 2). A 32 MiB all_reduce run moves its bulk over the interface the ranks are
# told to use: first eth1 (CHORUS_SOCKET_IFNAME=eth1), then, as a control, the default
# (the interface that reaches the store, eth0). The other interface carries only the
# store traffic (under 1 MiB).
set -u
RUN=$1 BENCH=$2
source "$(dirname "$0")/netns_lib.sh"
netns_test_init "ifname"

netns_setup 2 --second
# run_and_measure: runs the job; sets D1/D2 = bytes host 0 sent on eth0/eth1 meanwhile.
run_and_measure() {
  local a1 a2
  a1=$(netns_tx_bytes 0 1); a2=$(netns_tx_bytes 0 2)
  netns_job_start "$RUN" "$TMP" "1 1" --timeout 50 -- \
    "$BENCH" --op all_reduce -b 32M -e 32M -n 3 -w 1 -c 1
  netns_job_wait 60 || fail "still running after 60 s"
  [ "${NETNS_JOB_RCS[*]}" = "0 0" ] || fail "exit codes ${NETNS_JOB_RCS[*]}"
  grep -q "^\[0\] # transport: tcp$" "$TMP/out.0" || fail "no '# transport: tcp' header"
  D1=$(( $(netns_tx_bytes 0 1) - a1 )); D2=$(( $(netns_tx_bytes 0 2) - a2 ))
}
MiB=$(( 1 << 20 ))

CHORUS_SOCKET_IFNAME=eth1 run_and_measure
echo "CHORUS_SOCKET_IFNAME=eth1: host 0 sent $D1 bytes on eth0, $D2 bytes on eth1"
[ "$D2" -gt $(( 64 * MiB )) ] || fail "eth1 carried only $D2 bytes"
[ "$D1" -lt "$MiB" ] || fail "eth0 carried $D1 bytes (the store alone needs far less)"

unset CHORUS_SOCKET_IFNAME
run_and_measure
echo "default: host 0 sent $D1 bytes on eth0, $D2 bytes on eth1"
[ "$D1" -gt $(( 64 * MiB )) ] || fail "eth0 carried only $D1 bytes"
[ "$D2" -lt "$MiB" ] || fail "eth1 carried $D2 bytes without being chosen"
echo "PASS (ifname)"
