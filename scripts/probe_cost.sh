#!/bin/bash
# Cost of the cost model's host probe at the first init, against the cached path:
# time of Communicator.init_from_env on 2 ranks with the tuning file removed (probe) and
# present (cache), interleaved, N rounds. Usage: scripts/probe_cost.sh BUILD_DIR [N]
set -eu
B=$1 N=${2:-8}
F=$(mktemp -u /tmp/chorus-probe-cost-XXXXXX.json)
export CHORUS_TUNING_FILE=$F PYTHONPATH=$B/python
PY='import time, chorus
t = time.perf_counter(); c = chorus.Communicator.init_from_env(); dt = time.perf_counter() - t
c.barrier()
if c.rank == 0: print(f"init_ms {dt * 1e3:.1f}")'
for i in $(seq "$N"); do
  rm -f "$F"
  probe=$(CHORUS_DEBUG=INFO CHORUS_DEBUG_SUBSYS=INIT "$B/tools/chorus-run/chorus-run" -n 2 python3 -c "$PY" 2>&1)
  cached=$("$B/tools/chorus-run/chorus-run" -n 2 python3 -c "$PY" 2>&1)
  echo "round $i: no file: $(echo "$probe" | grep -o 'init_ms [0-9.]*') ($(echo "$probe" | grep -o 'probe took [0-9.]* ms'))" \
       " cached: $(echo "$cached" | grep -o 'init_ms [0-9.]*')"
done
rm -f "$F"
