#!/usr/bin/env bash
# Builds the libFuzzer target (tests/fuzz/frame_fuzz.cc) with clang and runs it for a
# bounded time over the seed corpus. Usage: run_fuzz.sh <source root> <build dir> [seconds]
# Fails (never skips) when clang++ with the libFuzzer runtime is missing: scripts/install-deps.sh
# installs it (clang-14, libclang-rt-14-dev).
set -euo pipefail
src=$(cd "$1" && pwd)
out=$2
secs=${3:-20}
mkdir -p "$out"
out=$(cd "$out" && pwd)

cxx=""
for c in "${CHORUS_FUZZ_CXX:-}" clang++-14 clang++; do
  [ -n "$c" ] && command -v "$c" >/dev/null 2>&1 && { cxx=$c; break; }
done
if [ -z "$cxx" ]; then
  echo "FAIL: no clang++ found (set CHORUS_FUZZ_CXX or run scripts/install-deps.sh: clang-14," \
       "libclang-rt-14-dev)" >&2
  exit 1
fi
probe="$out/probe"
printf 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }\n' > "$probe.cc"
if ! "$cxx" -fsanitize=fuzzer,address,undefined "$probe.cc" -o "$probe" 2> "$probe.log"; then
  cat "$probe.log" >&2
  echo "FAIL: $cxx cannot link -fsanitize=fuzzer,address,undefined (libFuzzer runtime" \
       "missing?): run scripts/install-deps.sh (installs libclang-rt-14-dev)" >&2
  exit 1
fi

make -s -f "$src/tests/fuzz/fuzz.mk" -j"${CHORUS_FUZZ_JOBS:-2}" SRC="$src" OUT="$out" CXX="$cxx" \
  "$out/chorus_frame_fuzz"

# libFuzzer adds new inputs to the first directory: a scratch copy, never the source tree.
work="$out/corpus"
rm -rf "$work" && mkdir -p "$work" "$out/artifacts"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
exec "$out/chorus_frame_fuzz" -max_total_time="$secs" -timeout=5 -rss_limit_mb=2048 \
  -max_len=4096 -print_final_stats=1 -artifact_prefix="$out/artifacts/" \
  "$work" "$src/tests/fuzz/corpus"
