// Per-thread scratch memory that algorithms keep between operations. A buffer allocated
// per operation costs a page fault per 4 KiB page on first touch, and the allocator hands
// large blocks back to the kernel when they are freed; under virtualisation each fault
// costs microseconds (docs/PERFORMANCE.md, "TCP with more ranks than cores": 288 faults
// per 1 MiB all_reduce at 4 ranks were most of its time). Each use site has its own slot,
// so nested algorithms (hier running ring and tree phases) never share a buffer.
#pragma once
#include <cstddef>

namespace chorus::algo {

enum class ScratchSlot : int {
  kRingBlock0 = 0,  // ring reduce-scatter: blocks being reduced and forwarded
  kRingBlock1,
  kRingSlots,    // ring reduce-scatter's last step: chunk slots
  kRingOut,      // ring reduce_scatter in place: the reduced block
  kTreeAcc,      // tree reduce: running reduction of a non-root
  kTreeChunks,   // tree reduce: children's chunks
  kRhd,          // recursive halving-doubling: the received half
  kPairwise,     // all_to_all in place: the input
  kHier,         // hierarchical algorithms: blocks packed by host group
  kHierPart,     // hierarchical algorithms: a group's part
  kCount
};

// A buffer of at least `bytes` bytes of this thread's `slot`, valid until the next call
// for the same slot on this thread or until this object is destroyed. Contents are
// undefined. Buffers up to kRetainBytes stay allocated for the thread's next operations;
// larger ones are freed when the object is destroyed.
class Scratch {
 public:
  static constexpr std::size_t kRetainBytes = std::size_t{64} << 20;

  Scratch(ScratchSlot slot, std::size_t bytes);
  ~Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  char* data() const { return data_; }

 private:
  char* data_ = nullptr;
  bool owned_ = false;  // too large to retain: freed by the destructor
};

}  // namespace chorus::algo
