// Host memory the other ranks on this host can map. A collective whose buffers lie in it
// moves the bytes a rank reads from (or writes to) a peer with one plain copy through a
// mapping, instead of a system call per transfer (the single-copy algorithms: all_gather,
// all_to_all, reduce_scatter, all_reduce, broadcast over shared memory). Like NCCL's
// ncclMemAlloc or MPI_Alloc_mem: allocate the buffers you reuse (gradient buckets,
// benchmark buffers) once and keep them.
#pragma once
#include <cstddef>

#include "chorus/export.h"

namespace chorus {

// `bytes` (> 0, rounded up to whole pages) of zeroed memory. Usable like any other memory
// by any communicator; peers map it at their first transfer from it and keep the map
// until it is freed. Throws chorus::Error: kInvalidArgument for 0 bytes, kIo when the
// memory cannot be made. Peers map at most 2046 live allocations of a process; further
// ones work, their transfers take the system-call path.
CHORUS_EXPORT void* mem_alloc(std::size_t bytes);

// Frees what mem_alloc returned (no operation may still use it). Throws chorus::Error
// kInvalidArgument naming `ptr` for anything else (including a second free).
CHORUS_EXPORT void mem_free(void* ptr);

}  // namespace chorus
