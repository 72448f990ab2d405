#!/bin/bash
# Small all_reduce (8-512 B), two chorus builds and Open MPI over shared memory (vader),
# interleaved rounds. usage: small_ab.sh BEFORE_BUILD_DIR AFTER_BUILD_DIR [MPI_BENCH]
# (MPI_BENCH: the mpi_bench that compare.py builds, default AFTER/compare/mpi_bench).
# N (iterations, default 20000), R (ranks, default 2), ROUNDS (default 3).
set -euo pipefail
before=$1 after=$2 mpi=${3:-$2/compare/mpi_bench}
N=${N:-20000} R=${R:-2}
for round in $(seq "${ROUNDS:-3}"); do
  for b in "$before" "$after"; do
    echo "== $b round $round"
    "$b/tools/chorus-run/chorus-run" -n "$R" -- "$b/tools/chorus-bench/chorus-bench" \
      --op all_reduce -b 8 -e 512 -f 8 -n "$N" -w 200 -c 0 2>&1 |
      grep -E '^\[0\] +[0-9]+ ' | awk '{print $2, $7}'
  done
  if [[ -x "$mpi" ]]; then
    echo "== open-mpi round $round"
    OMPI_MCA_btl_vader_single_copy_mechanism=none mpirun --allow-run-as-root --oversubscribe \
      --bind-to none -np "$R" --mca pml ob1 --mca btl vader,self "$mpi" --op all_reduce \
      -b 8 -e 512 -f 8 -n "$N" -w 200 -c 0 2>&1 | grep -E '^ +[0-9]+ ' | awk '{print $1, $4}'
  fi
done
