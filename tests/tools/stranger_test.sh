#!/bin/bash
# A stranger attacks a running 4-rank job: stranger_test.sh MODE chorus-run chorus-bench
#   MODE tcp:  the TCP transport; every rank that accepts connections (ranks 0-2; the
#              highest rank only connects) gets, on its data port while it waits for the
#              mesh, garbage, a truncated frame, a huge length, a wrong wire version, a
#              wrong job token and a silent connection held open; the store gets its own
#              hostile requests before and throughout the run.
#   MODE auto: the default transport (shm on one host): only the store is attacked.
# The job must finish with exit status 0 and no wrong results (#wrong 0), the ranks must
# log a WARN for every stranger they drop, chorus-run (which hosts the store) for the
# store's. Bounded: chorus-run --timeout 120; every wait below has a limit.
set -u
MODE=$1 RUN=$2 BENCH=$3
TMP=$(mktemp -d)
STRANGER_PID=
cleanup() {
  [ -n "$STRANGER_PID" ] && kill "$STRANGER_PID" 2>/dev/null && wait "$STRANGER_PID" 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT

fail() { echo "FAIL ($MODE): $*" >&2; for f in "$TMP"/out "$TMP"/err "$TMP"/log.*; do
           [ -f "$f" ] && { echo "--- $f:" >&2; tail -n 40 "$f" >&2; }; done; exit 1; }

le16() { printf "\\x$(printf %02x $(($1 & 255)))\\x$(printf %02x $((($1 >> 8) & 255)))"; }
le32() { le16 $(($1 & 65535)); le16 $((($1 >> 16) & 65535)); }
zeros() { head -c "$1" /dev/zero; }
# A 64-byte TCP frame header (docs/WIRE.md): version kind token length_high32.
frame() { printf 'CHRS'; le16 "$1"; le16 "$2"; le32 "$3"; le32 0; zeros 16; le32 0; le32 "$4"; zeros 24; }
# A 16-byte store request header: version op body_len.
store_hdr() { printf 'CHST'; le16 "$1"; le16 "$2"; le32 7; le32 "$3"; }

# Sends what "$@" prints to 127.0.0.1:PORT and closes. False when nobody listens. In a
# subshell that ignores SIGPIPE: the server may close on us mid-write (the job itself
# keeps the default disposition).
send_to() (
  trap '' PIPE
  port=$1
  shift
  exec {fd}<>"/dev/tcp/127.0.0.1/$port" 2>/dev/null || exit 1
  "$@" >&"$fd" 2>/dev/null
  exec {fd}>&-
  exit 0
)
garbage() { printf 'GET / HTTP/1.1\r\nHost: chorus\r\n\r\n%.0s' 1 2 3; }
truncated() { frame 3 1 305419896 0 | head -c 30; }
huge() { frame 3 2 305419896 2147483647; }
old_version() { frame 2 1 305419896 0; }
wrong_token() { frame 3 1 305419896 0; }
store_truncated() { store_hdr 1 1 0 | head -c 10; }
store_huge() { store_hdr 1 1 4294967295; }
store_old_version() { store_hdr 9 2 0; }
store_bad_field() { store_hdr 1 1 8; le32 4294967280; printf 'xxxx'; }

attack_store() {
  local port=$1
  for f in garbage store_truncated store_huge store_old_version store_bad_field; do
    send_to "$port" "$f" || return 1
  done
}

TCP_ENV=()
[ "$MODE" = tcp ] && TCP_ENV=(CHORUS_TRANSPORT=tcp)
# Rank 3 starts only once the strangers are done ($TMP/go), so ranks 0-2 sit in mesh
# set-up with their listeners open; every rank records the store address.
env "${TCP_ENV[@]}" CHORUS_DEBUG=DEBUG CHORUS_DEBUG_SUBSYS=NET CHORUS_DEBUG_FILE="$TMP/log.%r" \
  "$RUN" -n 4 --timeout 120 sh -c '
    echo "$CHORUS_STORE_ADDR" > "$0/store.tmp.$CHORUS_RANK" && mv "$0/store.tmp.$CHORUS_RANK" "$0/store"
    if [ "$CHORUS_RANK" = 3 ]; then
      i=0; while [ ! -e "$0/go" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
    fi
    exec "$1" --op all_reduce -b 8 -e 1M -n 40 -w 2' "$TMP" "$BENCH" >"$TMP/out" 2>"$TMP/err" &
JOB=$!

wait_for() {  # wait_for FILE PATTERN: up to 20 s
  local i=0
  while ! grep -q -- "$2" "$1" 2>/dev/null; do
    i=$((i + 1)); [ $i -gt 400 ] && return 1; sleep 0.05
  done
}
wait_for "$TMP/store" ":" || fail "no store address"
STORE_PORT=$(sed 's/.*://' "$TMP/store" | head -n 1)
attack_store "$STORE_PORT" || fail "could not reach the store on port $STORE_PORT"

SILENT=()
if [ "$MODE" = tcp ]; then
  for r in 0 1 2; do
    wait_for "$TMP/log.$r" "rank $r listening on 127.0.0.1:" || fail "rank $r never listened"
    port=$(sed -n "s/.*rank $r listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p" "$TMP/log.$r" | head -n 1)
    for f in garbage truncated huge old_version wrong_token; do
      send_to "$port" "$f" || fail "rank $r's data port $port refused the stranger ($f)"
    done
    exec {fd}<>"/dev/tcp/127.0.0.1/$port" || fail "silent stranger to rank $r"
    SILENT+=("$fd")
  done
fi
touch "$TMP/go"

# Keep attacking the store while the job runs.
( while true; do attack_store "$STORE_PORT" || exit 0; sleep 0.2; done ) &
STRANGER_PID=$!
wait "$JOB"
rc=$?
for fd in "${SILENT[@]}"; do exec {fd}>&-; done
[ $rc -eq 0 ] || fail "the job failed with status $rc"

grep -q "^\[0\] # Out of bounds values : 0 OK" "$TMP/out" || fail "no OK footer"
rows=$(grep -E '^\[0\] +[0-9]' "$TMP/out" | awk '$10 != "0" || $14 != "0"')
[ -z "$rows" ] || fail "rows with wrong results: $rows"
[ "$(grep -cE '^\[0\] +[0-9]' "$TMP/out")" -ge 10 ] || fail "too few rows"

# The store server (in chorus-run) dropped the strangers with a WARN naming the reason.
grep -q "CHORUS WARN .*store server: dropping client: .*magic" "$TMP/err" || fail "no WARN for store garbage"
grep -q "CHORUS WARN .*store server: dropping client: .*version" "$TMP/err" || fail "no WARN for the store's wrong version"
[ "$(grep -c 'store server: dropping client' "$TMP/err")" -ge 4 ] || fail "too few store WARNs"
if [ "$MODE" = tcp ]; then
  for r in 0 1 2; do
    log="$TMP/log.$r"
    grep -q "CHORUS WARN .*rank $r: dropping a connection that closed before its hello" "$log" ||
      fail "rank $r: no WARN for the truncated frame"
    n=$(grep -c "CHORUS WARN .*rank $r: dropping an incoming connection with a bad hello" "$log")
    [ "$n" -ge 4 ] || fail "rank $r: $n bad-hello WARNs, expected 4 (garbage, huge, version, token)"
    grep -q "bad hello: .*version" "$log" || fail "rank $r: the wrong version is not named"
  done
fi
echo "PASS ($MODE)"
