"""torch.distributed backend "chorus": `import chorus.torch` registers it, then
`torch.distributed.init_process_group("chorus", ...)` runs every collective through
Chorus (CPU tensors). Built when CMake finds Torch (CHORUS_BUILD_TORCH); see docs/PYTHON.md."""
import atexit as _atexit
import math as _math

import torch as _torch
import torch.distributed as _dist

from chorus import mem_alloc as _mem_alloc

try:
    from chorus import _chorus_torch
except ImportError as e:  # the adapter is built only when CMake found Torch
    raise ImportError("chorus.torch: the PyTorch backend was not built (CHORUS_BUILD_TORCH; "
                      "Debian: apt-get install python3-torch libtorch-dev): " + str(e)) from e

ProcessGroupChorus = _chorus_torch.ProcessGroupChorus


def registered_tensor(shape, dtype=None):
    """A zeroed CPU tensor of ``shape`` and ``dtype`` (default: torch's default dtype) in
    registered memory (``chorus.mem_alloc``): collectives of backend "chorus" on such
    tensors on every rank of a host move the peers' bytes with plain copies (the
    single-copy algorithms), and the automatic choice follows. Allocate the tensors you
    reuse (gradient buckets, communication buffers) once."""
    dtype = dtype or _torch.get_default_dtype()
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    count = _math.prod(shape)
    itemsize = _torch.empty((), dtype=dtype).element_size()
    buf = _mem_alloc(max(1, count) * itemsize)  # the tensor keeps it alive
    return _torch.frombuffer(buf, dtype=dtype, count=max(1, count))[:count].reshape(shape)


def _create(store, rank, world_size, timeout):
    """Called by torch once per group (the default one and every new_group), with that
    group's PrefixStore; the group's timeout becomes Chorus's per-operation deadline."""
    return ProcessGroupChorus(store, rank, world_size, timeout)


if "CHORUS" not in getattr(_dist.Backend, "_plugins", {}) and not hasattr(_dist.Backend, "CHORUS"):
    _dist.Backend.register_backend("chorus", _create)


# At exit, let the operations still in flight complete and their Futures' callbacks (Python
# .then() callbacks among them) run before the interpreter finalizes: Python kills a thread
# that takes the GIL during finalization, which aborts the process. Bounded: an operation
# that cannot complete (a peer gone) does not hold the exit for more than 10 s.
_atexit.register(_chorus_torch._drain, 10.0)
