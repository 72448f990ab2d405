#!/bin/bash
# Does a second TCP connection between the same two hosts carry more? iperf3 across two
# network-namespace hosts (tests/netns/netns_lib.sh), 1 against 2 and 4 parallel streams,
# unshaped and with a 1gbit tbf on each host's egress. Prints Gbit/s per run.
#   bench/hosts/streams.sh [SECONDS]      (default 3 s per run; needs root and iperf3)
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
T=${1:-3}
command -v iperf3 >/dev/null || apt-get install -y iperf3 >/dev/null 2>&1 ||
  { echo "streams: iperf3 missing" >&2; exit 1; }
source "$repo/tests/netns/netns_lib.sh"
netns_setup 2
rate() {  # rate STREAMS: Gbit/s received
  netns_exec 1 iperf3 -s -D -1 >/dev/null 2>&1
  sleep 0.3
  timeout $(( T + 20 )) ip netns exec "$(netns_ns 0)" iperf3 -c "$(netns_addr 1)" -t "$T" -P "$1" -J |
    python3 -c 'import json,sys; print("%.2f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 1e9))'
}
echo "| link | 1 stream | 2 streams | 4 streams |"
echo "|---|---:|---:|---:|"
for shape in unshaped 1gbit; do
  for h in 0 1; do
    ip netns exec "$(netns_ns $h)" tc qdisc del dev eth0 root 2>/dev/null
    [ "$shape" = 1gbit ] && ip netns exec "$(netns_ns $h)" tc qdisc replace dev eth0 root tbf rate 1gbit burst 128k latency 20ms
  done
  echo "| $shape | $(rate 1) | $(rate 2) | $(rate 4) | (Gbit/s)"
done
