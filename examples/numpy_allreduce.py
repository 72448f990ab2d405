"""All-reduce numpy arrays with Chorus from Python.

Run from the repository root after building (PYTHONPATH points at the built module):

    PYTHONPATH=build/python build/tools/chorus-run/chorus-run -n 2 python3 examples/numpy_allreduce.py

Every rank contributes [rank, rank + 1, rank + 2, rank + 3]; with 2 ranks each prints
"all_reduce over 2 ranks: 1 3 5 7".
"""
import numpy as np

import chorus

with chorus.Communicator.init_from_env() as comm:
    x = np.arange(4, dtype=np.float32) + comm.rank
    comm.all_reduce(x)  # in place; comm.all_reduce(x, out) writes out instead
    print(f"rank {comm.rank}: all_reduce over {comm.size} ranks: {' '.join(f'{v:g}' for v in x)}")

    # Every rank's block, in rank order.
    blocks = np.empty(2 * comm.size, dtype=np.int64)
    comm.all_gather(np.full(2, comm.rank, dtype=np.int64), blocks)

    # Errors are chorus.Error subclasses named after chorus::ErrorCode.
    try:
        comm.all_reduce(x[::2])  # not contiguous: refused, never wrong data
    except chorus.InvalidArgumentError as e:
        if comm.rank == 0:
            print(f"rank 0: refused as expected: {e}")
