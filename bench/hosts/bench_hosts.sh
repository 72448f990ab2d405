#!/bin/bash
# all_reduce across two network-namespace "hosts" (tests/netns/netns_lib.sh), Chorus
# against Open MPI and Gloo, on an unshaped veth link and on links shaped with tc tbf:
#
#   bench/hosts/bench_hosts.sh [--quick] [--ranks-per-host L] [--build DIR] [--repeats R]
#                              [--shapes LIST] [--peer-dir DIR] [--no-mpi] [--no-gloo]
#                              [--keep DIR]
#
# Needs root (namespaces, tc). Two hosts (namespaces) joined by a bridge, L ranks on each
# (default 2); hosts are contiguous in rank order (host 0 = ranks 0..L-1).
#   Shapes: unshaped; 10gbit and 1gbit = tc tbf on each host's egress (eth0, host side of
#     its veth), so each direction of the host link is limited to the rate. tbf burst is
#     about 1 ms of the rate (10gbit: 1250k, 1gbit: 128k; above the 64 KiB GSO packets the
#     veth hands tbf) and latency (queue bound) 20 ms.
#   Systems: chorus-bench with the default selection (hier across hosts), with
#     CHORUS_ALGO=all_reduce:ring (flat ring over all 2L ranks) and all_reduce:hier; Open
#     MPI's mpi_bench (bench/compare) started by mpirun in host 0's namespace, its daemon
#     in host 1's namespace through an rsh agent (ip netns exec + a UTS namespace named
#     after the host, so the two "hosts" differ in hostname as real ones would), btl
#     self,vader,tcp on eth0 (vader within a host, tcp across: as Chorus's shm+tcp), and
#     mpi_yield_when_idle 1: with --host h:L the job is not "oversubscribed" for Open MPI,
#     which then spins without yielding; 2L spinning ranks on 2 CPUs took 4-16 ms for 8 B.
#     Gloo's gloo_bench (bench/compare: gloo::allreduce, what PyTorch's gloo backend
#     calls), L ranks per host started by chorus-run, TCP on eth0 (GLOO_SOCKET_IFNAME).
#   Sizes: 8 B (500 iterations) and 64 KiB..64 MiB x4 (64 KiB-1 MiB: 40 iterations, 4 MiB
#     and up: 8), float32 sum, results checked (-c 1). --quick: unshaped only, 8 B and
#     64 KiB / 512 KiB / 4 MiB, few iterations, one repeat (about a minute).
#   Repeats: every system runs R times (default 3), interleaved (system after system, then
#     again), and each cell is the median of its R runs: on a 2-vCPU VM one run of a few
#     iterations moves by up to 1.6x between two columns that run the same algorithm.
#   --shapes: a comma-separated subset of unshaped,10gbit,1gbit (default all three).
# Output: one Markdown table per shape: time (us, out-of-place) and busbw (GB/s, =
# algbw x 2(n-1)/n) per system, and on shaped links "link%", the share of the link rate
# that the bytes the algorithm sends across the link represent:
#   link% = X(S) / time / rate, X = bytes one host sends to the other (each way) for size S:
#   hier, H hosts: 2(H-1)/H x S (each of the L counterpart all_reduces carries S/L)
#     -> S for H = 2;
#   flat ring over n = H x L ranks, hosts contiguous: each host has one outgoing ring edge
#     across the link, and every ring edge carries 2(n-1)/n x S -> 2(2L-1)/(2L) x S for
#     H = 2 (1.5 x S at L = 2; the same for a bidirectional ring: two rings of S/2);
#   default: the selector picks hier across hosts above small_bytes (64 KiB; below, rd
#     or rhd over all ranks) -> as hier;
#   Open MPI and Gloo: they pick their own algorithm; link% assumes a flat ring (the
#     formula above), so read it as a rough figure.
# Every command is bounded (chorus-run --timeout plus netns_job_wait, `timeout` around
# mpirun, tc and the build); the namespaces go away at exit (netns_lib's EXIT trap).
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
QUICK=0 L=2 BUILD="$repo/build" PEER=/tmp/chorus-bench-hosts/compare MPI=1 GLOO=1 KEEP="" R=3
ONLY_SHAPES=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1 ;;
    --ranks-per-host) L=$2; shift ;;
    --build) BUILD=$2; shift ;;
    --repeats) R=$2; shift ;;
    --shapes) ONLY_SHAPES=$2; shift ;;
    --peer-dir) PEER=$2; shift ;;
    --no-mpi) MPI=0 ;;
    --no-gloo) GLOO=0 ;;
    --keep) KEEP=$2; shift ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "bench_hosts: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
RUN="$BUILD/tools/chorus-run/chorus-run"
BENCH="$BUILD/tools/chorus-bench/chorus-bench"
[ -x "$RUN" ] && [ -x "$BENCH" ] || { echo "bench_hosts: no chorus-run/chorus-bench in $BUILD" >&2; exit 1; }
command -v python3 >/dev/null || { echo "bench_hosts: needs python3 (tables)" >&2; exit 1; }
NP=$(( 2 * L ))
unset CHORUS_ALGO  # "default" means the selector's choice (an empty CHORUS_ALGO)

if [ "$MPI" = 1 ]; then
  timeout 600 "$repo/bench/compare/install-deps.sh" >&2 || { echo "bench_hosts: Open MPI install failed: --no-mpi" >&2; MPI=0; }
fi
if [ "$MPI" = 1 ]; then
  timeout 300 "$repo/bench/compare/build.sh" "$PEER" mpi >&2 ||
    { echo "bench_hosts: mpi_bench build failed: --no-mpi" >&2; MPI=0; }
fi
if [ "$GLOO" = 1 ]; then
  { timeout 600 "$repo/bench/compare/install-deps.sh" && timeout 300 "$repo/bench/compare/build.sh" "$PEER" gloo; } >&2 ||
    { echo "bench_hosts: gloo_bench build failed: --no-gloo" >&2; GLOO=0; }
fi

source "$repo/tests/netns/netns_lib.sh"
TMP=$(mktemp -d /tmp/bench_hosts.XXXXXX)
NETNS_CLEANUP_HOOK='[ -n "$KEEP" ] && mkdir -p "$KEEP" && cp -r "$TMP"/. "$KEEP"/; rm -rf "$TMP"'
ulimit -c 0
netns_setup 2

if [ "$QUICK" = 1 ]; then
  SHAPES=(unshaped)
  SEGMENTS=("8 8 2 10 2" "64K 4M 8 5 1")          # minbytes maxbytes factor iters warmup
  R=1
else
  SHAPES=(unshaped 10gbit 1gbit)
  SEGMENTS=("8 8 2 500 20" "64K 1M 4 40 5" "4M 64M 4 8 2")
fi
[ -n "$ONLY_SHAPES" ] && IFS=, read -r -a SHAPES <<<"$ONLY_SHAPES"
case "$R" in ''|*[!0-9]*|0) echo "bench_hosts: --repeats needs a positive number" >&2; exit 2 ;; esac
SYSTEMS=(default ring hier)
[ "$MPI" = 1 ] && SYSTEMS+=(mpi)
[ "$GLOO" = 1 ] && SYSTEMS+=(gloo)

declare -A BURST=([10gbit]=1250k [1gbit]=128k)
shape() {  # shape NAME: tbf on both hosts' eth0, or none
  local h
  for h in 0 1; do
    timeout 10 ip netns exec "$(netns_ns $h)" tc qdisc del dev eth0 root 2>/dev/null
    if [ "$1" != unshaped ]; then
      timeout 10 ip netns exec "$(netns_ns $h)" tc qdisc replace dev eth0 root tbf \
        rate "$1" burst "${BURST[$1]}" latency 20ms || { echo "bench_hosts: tc on host $h failed" >&2; exit 1; }
    fi
  done
}

# rsh agent for mpirun: "agent.sh ADDR CMD..." runs CMD (a shell command line, as ssh
# would) in ADDR's namespace, with the hostname ADDR in a UTS namespace of its own.
AGENT="$TMP/agent.sh"
{
  echo '#!/bin/bash'
  echo 'while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do shift; done  # ssh-style options'
  echo 'host=$1; shift'
  echo 'case "$host" in'
  echo "  $(netns_addr 0)) ns=$(netns_ns 0) ;;"
  echo "  $(netns_addr 1)) ns=$(netns_ns 1) ;;"
  echo '  *) echo "agent: unknown host $host" >&2; exit 1 ;;'
  echo 'esac'
  echo 'exec ip netns exec "$ns" unshare --uts /bin/sh -c "hostname $host && $*"'
} >"$AGENT"
chmod +x "$AGENT"

# run_chorus SYSTEM SHAPE SEG-INDEX B E F N W: one chorus-bench sweep -> $TMP/SHAPE.SYSTEM.I.json
run_chorus() {
  local sys=$1 sh=$2 i=$3 b=$4 e=$5 f=$6 n=$7 w=$8 dir="$TMP/$2.$1.$3" algo=""
  mkdir -p "$dir"
  [ "$sys" = ring ] && algo=all_reduce:ring
  [ "$sys" = hier ] && algo=all_reduce:hier
  CHORUS_ALGO=$algo netns_job_start "$RUN" "$dir" "$L $L" --timeout 280 -- \
    "$BENCH" --op all_reduce -b "$b" -e "$e" -f "$f" -n "$n" -w "$w" -c 1 --json "$dir/rows.json"
  netns_job_wait 290 || echo "bench_hosts: $sh $sys $b..$e timed out" >&2
  [ "${NETNS_JOB_RCS[*]:-}" = "0 0" ] || echo "bench_hosts: $sh $sys $b..$e: exit codes ${NETNS_JOB_RCS[*]:-}" >&2
  [ -s "$dir/rows.json" ] || { echo "bench_hosts: $sh $sys $b..$e failed:" >&2; tail -5 "$dir"/out.0 "$dir"/err.0 >&2; }
}

run_mpi() {
  local sh=$2 i=$3 b=$4 e=$5 f=$6 n=$7 w=$8 dir="$TMP/$2.mpi.$3" root=()
  mkdir -p "$dir"
  [ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
  # mpirun stays in host 0's namespace (and hostname); host 0's daemon is mpirun itself.
  OMPI_MCA_btl_vader_single_copy_mechanism=none timeout 290 \
    ip netns exec "$(netns_ns 0)" unshare --uts /bin/sh -c 'hostname "$0" && exec "$@"' "$(netns_addr 0)" \
    mpirun "${root[@]}" --oversubscribe --bind-to none -np "$NP" \
      --host "$(netns_addr 0):$L,$(netns_addr 1):$L" --mca plm_rsh_agent "$AGENT" \
      --mca pml ob1 --mca btl self,vader,tcp --mca btl_tcp_if_include eth0 \
      --mca oob_tcp_if_include eth0 --mca mpi_yield_when_idle 1 \
      "$PEER/mpi_bench" --op all_reduce -b "$b" -e "$e" -f "$f" -n "$n" -w "$w" -c 1 \
      --json "$dir/rows.json" >"$dir/out" 2>"$dir/err"
  local rc=$?
  [ $rc = 0 ] && [ -s "$dir/rows.json" ] ||
    { echo "bench_hosts: $sh mpi $b..$e failed (rc $rc):" >&2; tail -5 "$dir/out" "$dir/err" >&2; }
}

# Gloo's ranks (gloo::allreduce, the call PyTorch's gloo backend makes) started by chorus-run
# in each host, meeting through a FileStore (the namespaces share the file system) and
# listening on eth0 (GLOO_SOCKET_IFNAME).
run_gloo() {
  local sh=$2 i=$3 b=$4 e=$5 f=$6 n=$7 w=$8 dir="$TMP/$2.gloo.$3"
  mkdir -p "$dir/store"
  GLOO_SOCKET_IFNAME=eth0 netns_job_start "$RUN" "$dir" "$L $L" --timeout 280 -- \
    "$PEER/gloo_bench" --store "$dir/store" --op all_reduce -b "$b" -e "$e" -f "$f" -n "$n" \
    -w "$w" -c 1 --json "$dir/rows.json"
  netns_job_wait 290 || echo "bench_hosts: $sh gloo $b..$e timed out" >&2
  [ -s "$dir/rows.json" ] || { echo "bench_hosts: $sh gloo $b..$e failed:" >&2; tail -5 "$dir"/out.0 "$dir"/err.0 >&2; }
}

start=$SECONDS
for sh in "${SHAPES[@]}"; do
  shape "$sh"
  for (( rep = 0; rep < R; rep++ )); do
    for sys in "${SYSTEMS[@]}"; do
      for i in "${!SEGMENTS[@]}"; do
        t0=$SECONDS
        case "$sys" in
          mpi) run_mpi "$sys" "$sh" "$i.$rep" ${SEGMENTS[$i]} ;;
          gloo) run_gloo "$sys" "$sh" "$i.$rep" ${SEGMENTS[$i]} ;;
          *) run_chorus "$sys" "$sh" "$i.$rep" ${SEGMENTS[$i]} ;;
        esac
        echo "bench_hosts: $sh $sys [${SEGMENTS[$i]}] repeat $(( rep + 1 ))/$R $(( SECONDS - t0 )) s" >&2
      done
    done
  done
done
shape unshaped
echo "bench_hosts: all runs took $(( SECONDS - start )) s" >&2

echo "## $L ranks per host x 2 hosts, all_reduce float32 sum, median of $R interleaved runs ($(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) CPUs, $(date -u '+%Y-%m-%d %H:%M UTC'))"
timeout 60 python3 - "$TMP" "$L" "${SHAPES[*]}" "${SYSTEMS[*]}" <<'EOF'
import glob, json, os, sys
tmp, L, shapes, systems = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4].split()
n = 2 * L
rate = {"10gbit": 10e9 / 8, "1gbit": 1e9 / 8}            # bytes/s each way
factor = {"default": 1.0, "hier": 1.0, "ring": 2 * (n - 1) / n, "mpi": 2 * (n - 1) / n,
          "gloo": 2 * (n - 1) / n}
names = {"default": "chorus default", "ring": "chorus ring", "hier": "chorus hier",
         "mpi": "Open MPI", "gloo": "Gloo"}
for sh in shapes:
    runs = {}
    for sys_ in systems:
        for path in sorted(glob.glob(os.path.join(tmp, "%s.%s.*" % (sh, sys_), "rows.json"))):
            try:
                data = json.load(open(path))
            except Exception:
                continue
            for r in data:
                wrong = (r.get("oop_wrong") or 0) + (r.get("ip_wrong") or 0)
                runs.setdefault(r["size"], {}).setdefault(sys_, []).append(
                    (r["oop_time_us"], r["oop_busbw"], wrong))
    rows = {}  # the median run of each cell by time; wrong results of any run are shown
    for size, per in runs.items():
        for sys_, rs in per.items():
            t, bw, _ = sorted(rs)[len(rs) // 2]
            rows.setdefault(size, {})[sys_] = (t, bw, sum(w for _, _, w in rs))
    print("\n### %s%s\n" % (sh, "" if sh == "unshaped" else " (tc tbf on each host's egress)"))
    head = ["size (B)"]
    for s in systems:
        head += ["%s time (us)" % names[s], "busbw"]
        if sh in rate: head.append("link%")
    print("| " + " | ".join(head) + " |")
    print("|" + "---:|" * len(head))
    for size in sorted(rows):
        cells = [str(size)]
        for s in systems:
            if s not in rows[size]:
                cells += ["-", "-"] + (["-"] if sh in rate else [])
                continue
            t, bw, wrong = rows[size][s]
            cells += ["%.1f%s" % (t, "" if not wrong else " (%d wrong)" % wrong), "%.3f" % bw]
            if sh in rate:
                cells.append("%.0f%%" % (100 * factor[s] * size / (t * 1e-6) / rate[sh]))
        print("| " + " | ".join(cells) + " |")
EOF
