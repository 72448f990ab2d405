#!/usr/bin/env bash
# End-to-end packaging test: cmake --install into a temporary prefix, then build the
# stand-alone example with find_package(chorus) and with pkg-config, and run both under
# the installed chorus-run.
set -euo pipefail
build_dir=$1
src_dir=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build_dir" --prefix "$tmp/prefix" >/dev/null
for f in include/chorus/chorus.h bin/chorus-run bin/chorus-bench bin/chorus-info; do
  [ -e "$tmp/prefix/$f" ] || { echo "missing $f after install"; exit 1; }
done
libdir=$(dirname "$(find "$tmp/prefix" -name 'libchorus.so' | head -n 1)")
[ -n "$libdir" ] || { echo "libchorus.so not installed"; exit 1; }
[ -e "$libdir/cmake/chorus/chorusConfig.cmake" ] || { echo "CMake package not installed"; exit 1; }
[ -e "$libdir/pkgconfig/chorus.pc" ] || { echo "chorus.pc not installed"; exit 1; }

# 1. A user's CMake project: find_package(chorus) + chorus::chorus.
cmake -S "$src_dir/examples/external_project" -B "$tmp/app" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/app" >/dev/null
out=$(LD_LIBRARY_PATH="$libdir" timeout 60 "$tmp/prefix/bin/chorus-run" -n 3 "$tmp/app/app")
echo "$out"
grep -q "sum over 3 ranks: 6" <<<"$out" || { echo "external app printed the wrong sum"; exit 1; }

# 2. pkg-config.
PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --exists chorus
g++ -o "$tmp/hello" "$src_dir/examples/hello_allreduce.cpp" \
  $(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs chorus)
out2=$(LD_LIBRARY_PATH="$libdir" timeout 60 "$tmp/prefix/bin/chorus-run" -n 2 "$tmp/hello")
echo "$out2"
grep -q "all_reduce over 2 ranks: 3 3 3 3" <<<"$out2" || { echo "pkg-config build printed the wrong sum"; exit 1; }
# 3. The Python module, when the build has it: imported from the install prefix (its
# RPATH finds the installed libchorus; no LD_LIBRARY_PATH), run under chorus-run.
if [ -d "$build_dir/python/chorus" ]; then
  pydir="$tmp/prefix/lib/python3/dist-packages"
  for f in chorus/__init__.py; do
    [ -e "$pydir/$f" ] || { echo "missing $pydir/$f after install"; exit 1; }
  done
  ls "$pydir"/chorus/_chorus*.so >/dev/null || { echo "chorus._chorus not installed"; exit 1; }
  out3=$(cd "$tmp" && PYTHONPATH="$pydir" timeout 60 "$tmp/prefix/bin/chorus-run" -n 2 \
         /usr/bin/python3 "$src_dir/examples/numpy_allreduce.py")
  echo "$out3"
  grep -q "all_reduce over 2 ranks: 1 3 5 7" <<<"$out3" || { echo "installed Python module printed the wrong sum"; exit 1; }
  where=$(cd "$tmp" && PYTHONPATH="$pydir" /usr/bin/python3 -c "import chorus; print(chorus.__file__)")
  [[ "$where" == "$pydir"/* ]] || { echo "imported chorus from $where, not the install prefix"; exit 1; }
fi
echo "install test passed"
