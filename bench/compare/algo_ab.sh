#!/bin/bash
# A/B of two algorithms of one collective with chorus-bench, interleaved: runs A, B, A,
# B, ... `reps` times each and prints the median busbw (GB/s) per size, out of place and
# in place. Used to set the selector's thresholds (docs/PERFORMANCE.md).
#   bench/compare/algo_ab.sh RANKS OP MINBYTES MAXBYTES ALGO_A ALGO_B [REPS] [BUILD_DIR]
#   e.g. bench/compare/algo_ab.sh 2 all_gather 64K 16M shm single_copy 3
set -euo pipefail
if [ $# -lt 6 ]; then
  sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
n=$1 op=$2 lo=$3 hi=$4 a=$5 b=$6 reps=${7:-3} build=${8:-build}
run=$build/tools/chorus-run/chorus-run
bench=$build/tools/chorus-bench/chorus-bench
for _ in $(seq "$reps"); do
  for algo in "$a" "$b"; do
    "$run" -n "$n" "$bench" -b "$lo" -e "$hi" -f 4 --op "$op" --algo "$op:$algo" -n 20 -w 3 |
      awk -v algo="$algo" '/^\[0\] +[0-9]/ {print algo, $2, $9, $13}'
  done
done | python3 -c '
import collections, statistics, sys
rows = collections.defaultdict(lambda: ([], []))
order = []
for line in sys.stdin:
    algo, size, oop, inp = line.split()
    if algo not in order:
        order.append(algo)
    rows[(int(size), algo)][0].append(float(oop))
    rows[(int(size), algo)][1].append(float(inp))
print("size", *[f"{a}:out-of-place,in-place" for a in order])
for size in sorted({k[0] for k in rows}):
    cells = []
    for a in order:
        o, i = rows[(size, a)]
        cells.append(f"{statistics.median(o):.2f},{statistics.median(i):.2f}")
    print(size, *cells)
'
