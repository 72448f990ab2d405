#!/bin/bash
# The comparison harness's loopback stream baseline and its table columns:
#   compare_stream_test.sh SOURCE_DIR
# Builds tcp_stream (g++ only, as bench/compare/build.sh does), streams 64 MiB twice over
# 127.0.0.1 and checks the JSON, runs a ring of 3 processes; then renders a table with
# chorus-tcp, gloo, a stream and rings of 2 and 4 ranks and checks the tcp/gloo,
# tcp/stream and tcp/ring ratios.
set -u
SRC=$1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

bash "$SRC/bench/compare/build.sh" "$TMP" stream >/dev/null || fail "tcp_stream does not build"
[ -x "$TMP/tcp_stream" ] || fail "no tcp_stream binary"
[ -e "$TMP/mpi_bench" ] && fail "build.sh built mpi_bench when only stream was asked"
"$TMP/tcp_stream" --bytes 64M --buffer 1M --repeats 2 --json "$TMP/s.json" >"$TMP/out" ||
  fail "tcp_stream failed: $(cat "$TMP/out")"
grep -c "^tcp_stream: run [12]: [0-9.]* GB/s" "$TMP/out" | grep -qx 2 || fail "two runs not printed"
python3 - "$TMP/s.json" <<'PY' || fail "bad JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["gbps"]) == 2 and all(g > 0 for g in d["gbps"]), d
assert sorted(d["gbps"])[1] == d["median_gbps"], d
PY
"$TMP/tcp_stream" --bytes 16M --buffer 1M --repeats 1 --ring 3 --json "$TMP/r.json" >"$TMP/out" ||
  fail "tcp_stream --ring 3 failed: $(cat "$TMP/out")"
grep -q "^tcp_stream: run 1: [0-9.]* GB/s (16777216 bytes, .*ring of 3)" "$TMP/out" ||
  fail "ring run not printed: $(cat "$TMP/out")"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["median_gbps"] > 0, d' \
  "$TMP/r.json" || fail "bad ring JSON"
"$TMP/tcp_stream" --ring 1 >/dev/null 2>&1 && fail "--ring 1 accepted"
"$TMP/tcp_stream" --bytes 0 >/dev/null 2>&1 && fail "--bytes 0 accepted"
"$TMP/tcp_stream" --buffer >/dev/null 2>&1 && fail "missing value accepted"

python3 - "$SRC/bench/compare" <<'PY' || fail "table columns"
import sys
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[1])
from systems import Cell, RunResult
from table import Results
res = Results(["chorus", "chorus-tcp", "gloo"])
res.stream_names = ["stream", "stream-64M", "ring"]
cell = Cell(2, "all_reduce", ("64M", "64M", "2"), 1, 0)
size = 64 << 20
# busbw = size / t at 2 ranks: chorus-tcp 2 GB/s, gloo 1 GB/s, streams 4 and 2 GB/s.
res.add("chorus", cell, RunResult(rows={size: (size / 4e3, 0)}))
res.add("chorus-tcp", cell, RunResult(rows={size: (size / 2e3, 0)}))
res.add("gloo", cell, RunResult(rows={size: (size / 1e3, 0)}))
for g in (3.0, 4.0, 5.0):
    res.add_stream("stream", g)
res.add_stream("stream-64M", 2.0)
res.add_stream("ring", 8.0, 2)  # the row's rank count: 2 / 8 GB/s
res.add_stream("ring", 1.0, 4)  # another rank count's ring: not this row's
table = res.markdown(["all_reduce"], [2])
head, _, row = table.splitlines()
assert head.endswith("| tcp/gloo | tcp/stream | tcp/stream-64M | tcp/ring |"), head
assert row.endswith("| 2.00 | 50% | 100% | 25% |"), row
assert res.stream_keys("ring") == [("ring", 2), ("ring", 4)], res.stream_keys("ring")
assert not res.any_failed()
res.add_stream("stream", None)
assert res.any_failed()
PY
echo PASS
