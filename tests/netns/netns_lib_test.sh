#!/bin/bash
# Self-test of the namespace harness: netns_lib_test.sh
# Three hosts with a second network and tbf shaping: addresses, reachability on both
# networks, the qdisc, a link taken down and up again, processes killed and everything
# deleted by the cleanup; and a non-root caller fails with a clear message.
set -u
LIB="$(dirname "$0")/netns_lib.sh"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL (netns_lib): $*" >&2; cat "$TMP"/log 2>/dev/null >&2; exit 1; }

# The harness runs in a child shell so that its exit trap (the cleanup) can be checked.
bash -c '
  set -u
  source "$1"
  netns_setup 3 --second --rate 100mbit --burst 64k --latency 20ms
  echo "id $NETNS_ID"
  for h in 0 1 2; do
    netns_exec $h ip -o -4 addr show dev eth0 | grep -q " $(netns_addr $h 1)/24 " || { echo "bad eth0 on $h"; exit 1; }
    netns_exec $h ip -o -4 addr show dev eth1 | grep -q " $(netns_addr $h 2)/24 " || { echo "bad eth1 on $h"; exit 1; }
    netns_exec $h ip -o link show lo | grep -q "UP" || { echo "lo down on $h"; exit 1; }
    netns_exec $h tc qdisc show dev eth0 | grep -q "tbf .*rate 100Mbit" || { echo "no tbf on $h"; exit 1; }
  done
  netns_reachable 2 "$(netns_addr 1 2)" || { echo "host 1 unreachable from 2 on net 2"; exit 1; }
  # The root namespace has none of our interfaces.
  ip -o link | grep -Eq ": h[0-9]+n[12]@" && { echo "root namespace touched"; exit 1; }
  netns_link_down 1
  netns_reachable 0 "$(netns_addr 1)" && { echo "host 1 reachable with its link down"; exit 1; }
  netns_reachable 0 "$(netns_addr 1 2)" || { echo "net 2 of host 1 went down too"; exit 1; }
  netns_link_up 1
  for _ in $(seq 30); do netns_reachable 0 "$(netns_addr 1)" && break; sleep 0.1; done
  netns_reachable 0 "$(netns_addr 1)" || { echo "host 1 unreachable after link up"; exit 1; }
  netns_exec 2 sleep 300 &
  sleep 0.2
  echo "sleeper $(ip netns pids "$(netns_ns 2)" | head -1)"
  echo ok
' _ "$LIB" >"$TMP/log" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q "^ok$" "$TMP/log" || fail "harness checks failed (exit $rc)"
id=$(sed -n 's/^id //p' "$TMP/log")
sleeper=$(sed -n 's/^sleeper //p' "$TMP/log")
ip netns list | grep -q "^$id" && fail "namespaces of $id left behind: $(ip netns list | grep "^$id")"
[ -n "$sleeper" ] || fail "no process ran in host 2"
kill -0 "$sleeper" 2>/dev/null && fail "process $sleeper in host 2 outlived the cleanup"

# Without root: a failure that says why.
if command -v setpriv >/dev/null; then
  setpriv --reuid 65534 --regid 65534 --clear-groups bash -c 'source "$1"; netns_setup 2' _ "$LIB" \
    >"$TMP/log" 2>&1
  rc=$?
  [ $rc -eq 1 ] || fail "non-root setup exited $rc, expected 1"
  grep -q "FAIL (netns): needs root to create network namespaces (uid 65534)" "$TMP/log" ||
    fail "non-root setup did not say why"
fi
echo "PASS (netns_lib)"
