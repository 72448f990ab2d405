// Bucketer: gradient bucketing. Many tensors packed into a few large all_reduces that
// start as soon as their bucket is complete, overlapping the rest of the backward pass.
#pragma once
#include <cstddef>
#include <memory>
#include <vector>

#include "chorus/communicator.h"
#include "chorus/export.h"
#include "chorus/stream.h"
#include "chorus/types.h"
#include "chorus/work.h"

namespace chorus {

// Wire compression of float32 buckets: each rank rounds its values to 16 bits before
// the all_reduce and widens the result back. Halves the bytes on the wire; costs
// precision: fp16 keeps 11 significant bits and a range of +-65504 (larger sums become
// inf), bf16 keeps 8 significant bits and float32's range. Every combining step of the
// reduction rounds to 16 bits again (it accumulates in fp32 within a step), so the
// relative error grows with the number of ranks, roughly (ranks) x 2^-11 for fp16 and
// (ranks) x 2^-8 for bf16. Buckets of other dtypes are never compressed.
enum class Compression { kNone, kFloat16, kBfloat16 };

struct BucketerOptions {
  // Like PyTorch DDP's bucket_cap_mb = 25. 0 = chosen from Communicator::estimate: the
  // smallest power of two from 64 KiB whose predicted all_reduce bus bandwidth is within
  // 10% of the model's large-message bandwidth (its value: Bucketer::bucket_bytes()).
  std::size_t bucket_bytes = 25u << 20;
  ReduceOp op = ReduceOp::kSum;          // kAvg for averaged gradients
  Compression compression = Compression::kNone;
  Stream stream = {};                    // where the buckets' all_reduces run
};

// Usage, every iteration on every rank:
//   for each tensor, as soon as its values are final: bucketer.mark_ready(index);
//   bucketer.finish();  // every tensor now holds the reduction over all ranks
// Tensors are registered once (add) in the same order on every rank; they are packed,
// in that order, into buckets of at most bucket_bytes of one dtype (a larger tensor gets
// a bucket of its own). A bucket's all_reduce starts when all its tensors are ready and
// every earlier bucket has started, so every rank starts buckets in the same order
// whatever order its tensors become ready in. Between the first mark_ready() of an
// iteration and the end of finish(), the registered tensors belong to the Bucketer.
// Not thread-safe (one thread drives it, like the communicator's issuing thread).
class CHORUS_EXPORT Bucketer {
 public:
  // `comm` must outlive the Bucketer (a stream of another communicator is refused when
  // the first bucket starts).
  explicit Bucketer(Communicator& comm, BucketerOptions options = {});
  ~Bucketer();
  Bucketer(const Bucketer&) = delete;
  Bucketer& operator=(const Bucketer&) = delete;

  // Registers `count` elements of `dtype` at `data`; returns the tensor's index (0, 1,
  // ...). Throws kInvalidArgument for a null buffer, count 0, an invalid dtype, or once
  // the buckets are laid out (by the first mark_ready(), finish() or num_buckets()).
  std::size_t add(void* data, std::size_t count, DataType dtype);
  // The tensor's values are final for this iteration. Throws kInvalidArgument for an
  // unknown index or one marked twice in an iteration; communication errors as the
  // communicator throws them.
  void mark_ready(std::size_t index);
  // Starts the buckets not started yet (marking every tensor ready), waits for all, and
  // copies the results into the tensors. Throws the first failure.
  void finish();

  std::size_t num_buckets() const;
  std::size_t num_tensors() const;
  // The bucket size in use (BucketerOptions::bucket_bytes, or the one chosen for 0).
  std::size_t bucket_bytes() const;

 private:
  static std::size_t auto_bucket_bytes(const Communicator& comm);
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace chorus
