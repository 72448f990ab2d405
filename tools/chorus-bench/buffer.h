// A benchmark buffer: heap memory, or with --registered memory from chorus::mem_alloc
// (which peers on this host map). Grows to the largest row; contents are not kept.
#pragma once
#include <cstddef>
#include <memory>

#include "chorus/memory.h"

namespace chorus_bench {

class Buffer {
 public:
  explicit Buffer(bool registered) : registered_(registered) {}
  ~Buffer() { release(); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void ensure(std::size_t bytes) {
    if (bytes <= size_) return;
    release();
    data_ = static_cast<std::byte*>(registered_ ? chorus::mem_alloc(bytes)
                                                : ::operator new(bytes, std::align_val_t{64}));
    size_ = bytes;
  }
  std::byte* data() { return data_; }

 private:
  void release() {
    if (data_ == nullptr) return;
    if (registered_) chorus::mem_free(data_);
    else ::operator delete(data_, std::align_val_t{64});
    data_ = nullptr;
    size_ = 0;
  }

  bool registered_;
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace chorus_bench
