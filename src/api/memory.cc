// chorus::mem_alloc / mem_free: host memory the ranks of this host can map.
#include "chorus/memory.h"

#include "api/error.h"
#include "core/factory.h"

namespace chorus {

void* mem_alloc(std::size_t bytes) { return api::value_or_throw(core::alloc_host_shared(bytes)); }

void mem_free(void* ptr) { api::throw_if_error(core::free_host_shared(ptr)); }

}  // namespace chorus
