#!/bin/sh
# Runs the peer-failure tests over shm and checks that they leave no /dev/shm/chorus-*
# segment behind (segments are unlinked as soon as every rank attached).
# Segments that existed before, or that vanish within 2 s (set-ups of other jobs), are ignored.
set -u
bin="$1"
before=$(ls /dev/shm 2>/dev/null | grep '^chorus-' | sort)
CHORUS_TRANSPORT=shm "$bin" --gtest_filter='PeerLost.*:Timeout.*:Teardown.*' >/dev/null 2>&1 || {
  echo "the failure scenarios themselves failed"; exit 1; }
for i in 1 2 3 4 5 6 7 8 9 10; do
  after=$(ls /dev/shm 2>/dev/null | grep '^chorus-' | sort)
  new=$(printf '%s\n' "$after" | grep -v -x -F "$before" | grep . || true)
  [ -z "$before" ] && new="$after"
  [ -z "$new" ] && { echo "no chorus-* residue in /dev/shm"; exit 0; }
  sleep 0.2
done
echo "left in /dev/shm: $new"
exit 1
