#!/bin/bash
# Network-namespace "hosts" on one machine, for multi-host tests and benchmarks (sourced).
#
#   source netns_lib.sh
#   netns_setup 3 [--second] [--rate 1gbit --burst 256k --latency 50ms]
#   netns_exec 1 ip addr            # a command in host 1
#   netns_addr 0 [2]                # host 0's address on network 1 (default) or 2
#   netns_shape 1 100mbit 64k 20ms [2]; netns_link_down 1 [2]
#   (cleanup runs by itself at exit)
#
# Host i (0-based) is namespace ${NETNS_ID}h$i with eth0 = 10.R.0.(i+1)/24 on bridge br0
# and, with --second, eth1 = 10.R.1.(i+1)/24 on br1. The bridges live in a namespace of
# their own (${NETNS_ID}br): the root namespace is never touched. NETNS_ID is unique per
# run (it includes $$) and R is drawn from it. Needs root and a working `ip netns`: when
# either is missing, netns_setup prints why and exits 1 (a failure, never a silent skip).
# netns_setup installs the EXIT trap (netns_cleanup): put the caller's own clean-up in
# NETNS_CLEANUP_HOOK rather than in a trap of its own. Namespaces left by a run that was
# killed (cn<pid>... whose pid is gone, e.g. after a CTest timeout) are removed by the next
# netns_setup.

NETNS_ID=${NETNS_ID:-cn$$}
NETNS_HOSTS=0
NETNS_SECOND=0
NETNS_SUBNET=$(( 20 + $$ % 200 ))
NETNS_CLEANUP_HOOK=${NETNS_CLEANUP_HOOK:-}  # a command run first by netns_cleanup
NETNS_CREATED=()

netns_fail() { echo "FAIL (netns): $*" >&2; exit 1; }

# For test scripts: netns_test_init NAME makes $TMP (removed at exit with the namespaces)
# and turns core files off; fail MESSAGE then prints "FAIL (NAME): MESSAGE" and every
# $TMP/out.* and $TMP/err.* file, and exits 1.
netns_test_init() {
  NETNS_TEST_NAME=$1
  TMP=$(mktemp -d)
  NETNS_CLEANUP_HOOK='rm -rf "$TMP"'
  ulimit -c 0
}
fail() {
  echo "FAIL (${NETNS_TEST_NAME:-netns}): $*" >&2
  local f
  for f in "$TMP"/out.* "$TMP"/err.*; do [ -f "$f" ] && { echo "--- $(basename "$f"):"; cat "$f"; } >&2; done
  exit 1
}

netns_ns() { echo "${NETNS_ID}h$1"; }
netns_bridge_ns() { echo "${NETNS_ID}br"; }
netns_if() { echo "eth$(( ${2:-1} - 1 ))"; }  # host side name of network 1 or 2
netns_addr() { echo "10.$NETNS_SUBNET.$(( ${2:-1} - 1 )).$(( $1 + 1 ))"; }
netns_exec() { local h=$1; shift; ip netns exec "$(netns_ns "$h")" "$@"; }

# Fails the test (exit 1) unless namespaces can be made here.
netns_require() {
  [ "$(id -u)" -eq 0 ] || netns_fail "needs root to create network namespaces (uid $(id -u))"
  command -v ip >/dev/null || netns_fail "the 'ip' command (iproute2) is missing"
  local probe="${NETNS_ID}probe"
  ip netns add "$probe" 2>/dev/null || netns_fail "'ip netns add' does not work here"
  ip netns del "$probe"
}

netns_add() { ip netns add "$1" || netns_fail "cannot create namespace $1"; NETNS_CREATED+=("$1");
              ip -n "$1" link set lo up; }

# Joins host $1 to bridge br$2-1 of the bridge namespace: veth pair made straight in the
# two namespaces (no name ever exists in the root namespace).
netns_wire() {
  local h=$1 net=$2 ns br peer
  ns=$(netns_ns "$h"); br=$(netns_bridge_ns); peer="h${h}n$net"
  ip link add name "$(netns_if "$h" "$net")" netns "$ns" type veth peer name "$peer" netns "$br" ||
    netns_fail "cannot create the veth of host $h on network $net"
  ip -n "$br" link set "$peer" master "br$(( net - 1 ))" up
  ip -n "$ns" addr add "$(netns_addr "$h" "$net")/24" dev "$(netns_if "$h" "$net")"
  ip -n "$ns" link set "$(netns_if "$h" "$net")" up
}

# Removes namespaces named cn<pid>h<i> / cn<pid>br whose run (pid) no longer exists.
netns_reap_stale() {
  local ns pid pids
  for ns in $(ip netns list | awk '{ print $1 }'); do
    [[ "$ns" =~ ^cn([0-9]+)(h[0-9]+|br|probe)$ ]] || continue
    pid=${BASH_REMATCH[1]}
    kill -0 "$pid" 2>/dev/null && continue
    pids=$(ip netns pids "$ns" 2>/dev/null)
    [ -n "$pids" ] && kill -9 $pids 2>/dev/null
    ip netns del "$ns" 2>/dev/null && echo "netns: removed $ns, left by a run that is gone" >&2
  done
}

netns_setup() {
  local n=$1 rate="" burst="" latency="" h net
  shift
  while [ $# -gt 0 ]; do
    case "$1" in
      --second) NETNS_SECOND=1 ;;
      --rate) rate=$2; shift ;;
      --burst) burst=$2; shift ;;
      --latency) latency=$2; shift ;;
      *) netns_fail "netns_setup: unknown option $1" ;;
    esac
    shift
  done
  netns_require
  netns_reap_stale
  trap netns_cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  NETNS_HOSTS=$n
  netns_add "$(netns_bridge_ns)"
  for net in 1 2; do
    [ "$net" = 2 ] && [ "$NETNS_SECOND" = 0 ] && continue
    ip -n "$(netns_bridge_ns)" link add "br$(( net - 1 ))" type bridge || netns_fail "cannot create a bridge"
    ip -n "$(netns_bridge_ns)" link set "br$(( net - 1 ))" up
  done
  for (( h = 0; h < n; h++ )); do
    netns_add "$(netns_ns "$h")"
    netns_wire "$h" 1
    [ "$NETNS_SECOND" = 1 ] && netns_wire "$h" 2
    if [ -n "$rate" ]; then
      netns_shape "$h" "$rate" "${burst:-64k}" "${latency:-50ms}" 1
      [ "$NETNS_SECOND" = 1 ] && netns_shape "$h" "$rate" "${burst:-64k}" "${latency:-50ms}" 2
    fi
  done
  netns_wait_reachable
}

# netns_reachable HOST ADDR: a TCP connect from the host to ADDR's port 9 is answered
# (refused counts: the peer's kernel answered); no ping needed.
netns_reachable() {
  local out
  out=$(netns_exec "$1" timeout 1 bash -c "exec 3<>/dev/tcp/$2/9" 2>&1)
  [ $? -eq 0 ] || [[ "$out" == *refused* ]]
}

# Every host reaches every other on each network (bridges may take a moment to forward).
netns_wait_reachable() {
  local h net nets=1 tries
  [ "$NETNS_SECOND" = 1 ] && nets="1 2"
  for net in $nets; do
    for (( h = 1; h < NETNS_HOSTS; h++ )); do
      for tries in $(seq 50); do
        netns_reachable 0 "$(netns_addr "$h" "$net")" && break
        [ "$tries" = 50 ] && netns_fail "host $h unreachable on network $net"
        sleep 0.1
      done
    done
  done
}

# netns_shape HOST RATE BURST LATENCY [NET]: tc tbf on the host side of the host's veth.
netns_shape() {
  ip netns exec "$(netns_ns "$1")" tc qdisc replace dev "$(netns_if "$1" "${5:-1}")" root tbf \
    rate "$2" burst "$3" latency "$4" || netns_fail "tc tbf on host $1 failed"
}

# netns_link_down HOST [NET]: the host's interface on that network goes down.
netns_link_down() { ip -n "$(netns_ns "$1")" link set dev "$(netns_if "$1" "${2:-1}")" down; }
netns_link_up() { ip -n "$(netns_ns "$1")" link set dev "$(netns_if "$1" "${2:-1}")" up; }

# Bytes sent / received so far by a host's interface on network 1 or 2.
netns_tx_bytes() { netns_exec "$1" cat "/sys/class/net/$(netns_if "$1" "${2:-1}")/statistics/tx_bytes"; }
netns_rx_bytes() { netns_exec "$1" cat "/sys/class/net/$(netns_if "$1" "${2:-1}")/statistics/rx_bytes"; }

# Kills what still runs in our namespaces, then deletes them (bridges and veths go with
# them). Safe to call twice; installed as the EXIT trap by netns_setup.
netns_cleanup() {
  local ns pids
  [ -n "$NETNS_CLEANUP_HOOK" ] && eval "$NETNS_CLEANUP_HOOK"
  NETNS_CLEANUP_HOOK=""
  for ns in "${NETNS_CREATED[@]}"; do
    pids=$(ip netns pids "$ns" 2>/dev/null)
    [ -n "$pids" ] && kill -9 $pids 2>/dev/null
  done
  for ns in "${NETNS_CREATED[@]}"; do
    for _ in 1 2 3 4 5; do
      [ -z "$(ip netns pids "$ns" 2>/dev/null)" ] && break
      sleep 0.1
    done
    ip netns del "$ns" 2>/dev/null
  done
  NETNS_CREATED=()
}

# ---- Chorus jobs over the hosts (chorus-run --nnodes, one agent per host) ----

NETNS_PORT=${NETNS_PORT:-29500}  # each namespace has its own ports: no clash across runs
NETNS_JOB_PIDS=()
NETNS_JOB_RCS=()

# Prefixes every line of stdin with the time it was read ("1712345678.123456 line").
netns_stamp() { local line; while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done; }

# netns_job_start RUN DIR "C0 C1 ..." [chorus-run options] -- prog args...
# Starts one chorus-run agent on host k with -n Ck ranks, CHORUS_HOST_ID=host$k and the
# store at host 0 ($NETNS_PORT). Agent k's stdout goes to DIR/out.k and its stderr, each
# line stamped with the time it came (netns_stamp), to DIR/err.k.
netns_job_start() {
  local run=$1 dir=$2 counts=($3) opts=() k
  shift 3
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do opts+=("$1"); shift; done
  [ "${1:-}" = "--" ] && shift
  NETNS_JOB_PIDS=()
  for (( k = 0; k < ${#counts[@]}; k++ )); do
    netns_exec "$k" env CHORUS_HOST_ID="host$k" "$run" --nnodes "${#counts[@]}" --node-rank "$k" \
      --master "$(netns_addr 0):$NETNS_PORT" -n "${counts[$k]}" "${opts[@]}" "$@" \
      >"$dir/out.$k" 2> >(netns_stamp >"$dir/err.$k") &
    NETNS_JOB_PIDS+=($!)
  done
}

# netns_job_wait SECONDS: waits for every agent; their exit codes go to NETNS_JOB_RCS.
# Returns 1 (after killing everything in the hosts) when they outlive SECONDS.
netns_job_wait() {
  local until=$(( SECONDS + $1 )) k alive
  while :; do
    alive=0
    for k in "${!NETNS_JOB_PIDS[@]}"; do kill -0 "${NETNS_JOB_PIDS[$k]}" 2>/dev/null && alive=1; done
    [ $alive = 0 ] && break
    if [ $SECONDS -ge $until ]; then
      for (( k = 0; k < NETNS_HOSTS; k++ )); do
        local pids; pids=$(ip netns pids "$(netns_ns "$k")"); [ -n "$pids" ] && kill -9 $pids 2>/dev/null
      done
      return 1
    fi
    sleep 0.1
  done
  NETNS_JOB_RCS=()
  for k in "${!NETNS_JOB_PIDS[@]}"; do wait "${NETNS_JOB_PIDS[$k]}"; NETNS_JOB_RCS+=($?); done
  sleep 0.2  # the stamping readers finish writing
}

# Pids of processes named COMM (e.g. chorus-stress) running in host $1.
netns_pids_named() {
  local pid
  for pid in $(ip netns pids "$(netns_ns "$1")"); do
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ] && echo "$pid"
  done
}
