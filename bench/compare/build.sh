#!/usr/bin/env bash
# Builds the comparison harness's peer benchmarks against Debian's Open MPI and Gloo:
#   bench/compare/build.sh [OUT_DIR [mpi|gloo|stream ...]]   (default: build/compare, all)
# -> OUT_DIR/mpi_bench (mpicxx), OUT_DIR/gloo_bench (g++ -lgloo) and OUT_DIR/tcp_stream
# (g++ alone: loopback TCP streams, one or a ring, the ceilings of the TCP rows).
# Kept out of the CMake build so that CI and `make test` never need MPI or Gloo.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-build/compare}"
shift || true
wanted=("$@")
[ ${#wanted[@]} -eq 0 ] && wanted=(mpi gloo stream)
want() { [[ " ${wanted[*]} " == *" $1 "* ]]; }
mkdir -p "$out"
flags=(-std=c++20 -O2 -Wall -Wextra -I"$here")
common=("$here/peer_args.cc" "$here/peer_shape.cc" "$here/peer_check.cc" "$here/peer_runner.cc")
# Rebuild a target only when a source is newer than it.
stale() {
  local target=$1; shift
  [ ! -e "$target" ] && return 0
  for src in "$@" "$here"/*.h; do [ "$src" -nt "$target" ] && return 0; done
  return 1
}
if want mpi && stale "$out/mpi_bench" "$here/mpi_bench.cc" "${common[@]}"; then
  echo "compare/build: mpi_bench"
  mpicxx "${flags[@]}" -DOMPI_SKIP_MPICXX -o "$out/mpi_bench" "$here/mpi_bench.cc" "${common[@]}"
fi
if want gloo && stale "$out/gloo_bench" "$here/gloo_bench.cc" "${common[@]}"; then
  echo "compare/build: gloo_bench"
  g++ "${flags[@]}" -o "$out/gloo_bench" "$here/gloo_bench.cc" "${common[@]}" -lgloo -pthread
fi
if want stream && stale "$out/tcp_stream" "$here/tcp_stream.cc"; then
  echo "compare/build: tcp_stream"
  g++ "${flags[@]}" -o "$out/tcp_stream" "$here/tcp_stream.cc" -pthread
fi
