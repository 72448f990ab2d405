"""Chorus: collective communication for host memory (Python bindings).

Every collective of the C++ API (include/chorus/communicator.h) works on numpy arrays
and any other buffer-protocol object; the element type comes from the buffer (pass
``dtype="bfloat16"`` to send uint16 arrays as bfloat16). Errors are ``chorus.Error``
subclasses, one per ``chorus.ErrorCode``. Blocking calls release the GIL.

    import numpy as np, chorus
    comm = chorus.Communicator.init_from_env()      # under chorus-run, torchrun, mpirun, srun
    x = np.full(4, comm.rank, dtype=np.float32)
    comm.all_reduce(x)                              # in place: x = sum over ranks
"""
import atexit as _atexit
import contextlib as _contextlib

from . import _chorus
from ._chorus import (  # noqa: F401  (re-exported)
    AbortedError,
    Bucketer,
    Communicator,
    Compression,
    DataType,
    DesyncError,
    Error,
    ErrorCode,
    HealthReport,
    InternalError,
    InvalidArgumentError,
    IoError,
    NO_COLOR,
    NotSupportedError,
    PeerLostError,
    ReduceOp,
    RegisteredBuffer,
    Store,
    Stream,
    TcpStoreServer,
    TimeoutError,
    Work,
    connect_tcp_store,
    mem_alloc,
    open_file_store,
)

__version__ = _chorus.__version__

# `from chorus import *` must not shadow the builtin TimeoutError (chorus.TimeoutError
# derives from it, so `except TimeoutError` catches Chorus timeouts too).
__all__ = [
    "AbortedError", "Bucketer", "Communicator", "Compression", "DataType", "DesyncError",
    "Error", "ErrorCode", "HealthReport", "InternalError", "InvalidArgumentError", "IoError",
    "NO_COLOR", "NotSupportedError", "PeerLostError", "ReduceOp", "RegisteredBuffer", "Store",
    "Stream", "TcpStoreServer", "Work", "connect_tcp_store", "mem_alloc", "open_file_store",
    "registered_array",
]


def registered_array(shape, dtype="float32"):
    """A zeroed numpy array of ``shape`` and ``dtype`` in registered memory
    (``chorus.mem_alloc``): collectives on such arrays on every rank of a host move the
    peers' bytes with plain copies (the single-copy algorithms), and the automatic choice
    follows. Allocate the arrays you reuse once."""
    import numpy as np

    dt = np.dtype(dtype)
    count = int(np.prod(shape, dtype=np.int64))
    buf = mem_alloc(max(1, count) * dt.itemsize)
    return np.frombuffer(buf, dtype=dt, count=count).reshape(shape)


@_contextlib.contextmanager
def _scoped_timeout(self, seconds):
    """``with comm.scoped_timeout(0.5): ...``: a per-operation deadline for the block."""
    previous = self.timeout
    self.set_timeout(seconds)
    try:
        yield self
    finally:
        self.set_timeout(previous)


Communicator.scoped_timeout = _scoped_timeout

# Communicators still open at exit are closed before the interpreter shuts down, so no
# stream worker runs a Python callback during finalization.
_atexit.register(_chorus._close_all)
