// Per-thread scratch buffers, one per slot, grown on demand and kept up to a bound.
#include "algo/scratch.h"

#include <memory>

namespace chorus::algo {

namespace {

struct Held {
  std::unique_ptr<char[]> data;
  std::size_t bytes = 0;
};

Held& held(ScratchSlot slot) {
  thread_local Held slots[static_cast<int>(ScratchSlot::kCount)];
  return slots[static_cast<int>(slot)];
}

}  // namespace

Scratch::Scratch(ScratchSlot slot, std::size_t bytes) {
  if (bytes == 0) return;
  if (bytes > kRetainBytes) {
    data_ = new char[bytes];
    owned_ = true;
    return;
  }
  Held& h = held(slot);
  if (h.bytes < bytes) {
    h.data.reset();  // free before allocating: the peak stays one buffer
    h.data = std::make_unique_for_overwrite<char[]>(bytes);
    h.bytes = bytes;
  }
  data_ = h.data.get();
}

Scratch::~Scratch() {
  if (owned_) delete[] data_;
}

}  // namespace chorus::algo
