// Bucketer: packs registered tensors into buckets, starts one asynchronous all_reduce per
// bucket in bucket order as buckets complete, unpacks (and widens) the results.
#include "chorus/bucketer.h"

#include <cstring>

#include "api/arg_check.h"
#include "api/error.h"
#include "kernels/convert.h"
#include "util/strings.h"

namespace chorus {

namespace {

struct Tensor {
  void* data;
  std::size_t count;
  DataType dtype;
  std::size_t bucket = 0;
  std::size_t offset = 0;  // elements into the bucket
  bool ready = false;
};

struct Bucket {
  DataType dtype;   // of its tensors
  DataType wire;    // on the wire (fp16/bf16 when compressed)
  std::vector<std::size_t> tensors;
  std::size_t count = 0;
  std::vector<unsigned char> buffer;  // packed; empty for a lone uncompressed tensor
  std::size_t waiting = 0;            // tensors not ready yet this iteration
  bool started = false;
  Work work;
};

DataType wire_type(Compression c, DataType dtype) {
  if (dtype != DataType::kFloat32 || c == Compression::kNone) return dtype;
  return c == Compression::kFloat16 ? DataType::kFloat16 : DataType::kBfloat16;
}

}  // namespace

struct Bucketer::State {
  Communicator* comm;
  BucketerOptions options;
  std::vector<Tensor> tensors;
  std::vector<Bucket> buckets;
  bool frozen = false;       // buckets laid out (first mark_ready)
  bool in_iteration = false;
  std::size_t next_start = 0;  // buckets start in index order

  // Lays out the buckets in registration order: a new bucket when the dtype changes or
  // the next tensor would overflow bucket_bytes.
  void freeze() {
    frozen = true;
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      Tensor& t = tensors[i];
      const std::size_t bytes = t.count * dtype_size(t.dtype);
      const bool fits = !buckets.empty() && buckets.back().dtype == t.dtype &&
                        (buckets.back().count * dtype_size(t.dtype) + bytes <= options.bucket_bytes);
      if (!fits) {
        Bucket fresh;
        fresh.dtype = t.dtype;
        fresh.wire = wire_type(options.compression, t.dtype);
        buckets.push_back(std::move(fresh));
      }
      Bucket& b = buckets.back();
      t.bucket = buckets.size() - 1;
      t.offset = b.count;
      b.count += t.count;
      b.tensors.push_back(i);
    }
    for (Bucket& b : buckets) {
      if (b.tensors.size() > 1 || b.wire != b.dtype) b.buffer.resize(b.count * dtype_size(b.wire));
    }
  }

  void begin_iteration() {
    if (!frozen) freeze();
    if (in_iteration) return;
    in_iteration = true;
    next_start = 0;
    for (Bucket& b : buckets) {
      b.waiting = b.tensors.size();
      b.started = false;
    }
    for (Tensor& t : tensors) t.ready = false;
  }

  void pack(Bucket& b) {
    for (std::size_t i : b.tensors) {
      const Tensor& t = tensors[i];
      unsigned char* dst = b.buffer.data() + t.offset * dtype_size(b.wire);
      if (b.wire != b.dtype)
        kernels::narrow_f32(b.wire, static_cast<const float*>(t.data),
                            reinterpret_cast<std::uint16_t*>(dst), t.count);
      else
        std::memcpy(dst, t.data, t.count * dtype_size(t.dtype));
    }
  }

  void unpack(Bucket& b) {
    for (std::size_t i : b.tensors) {
      const Tensor& t = tensors[i];
      const unsigned char* src = b.buffer.data() + t.offset * dtype_size(b.wire);
      if (b.wire != b.dtype)
        kernels::widen_to_f32(b.wire, reinterpret_cast<const std::uint16_t*>(src),
                              static_cast<float*>(t.data), t.count);
      else
        std::memcpy(t.data, src, t.count * dtype_size(t.dtype));
    }
  }

  // Starts every complete bucket whose predecessors have all started.
  void start_ready() {
    while (next_start < buckets.size() && buckets[next_start].waiting == 0) {
      Bucket& b = buckets[next_start++];
      void* buf = b.buffer.empty() ? tensors[b.tensors[0]].data : b.buffer.data();
      if (!b.buffer.empty()) pack(b);
      b.work = comm->all_reduce_async(buf, buf, b.count, b.wire, options.op, options.stream);
      b.started = true;
    }
  }

  // Waits for every started bucket; the first failure, if any.
  std::optional<Error> wait_all() {
    std::optional<Error> first;
    for (Bucket& b : buckets) {
      if (!b.started) continue;
      try {
        b.work.wait();
      } catch (const Error& e) {
        if (!first) first = e;
      }
      b.started = false;
    }
    return first;
  }
};

// The smallest power of two from 64 KiB whose predicted float32 all_reduce bus bandwidth
// is within 10% of the model's at 1 GiB (where the fixed costs no longer count); 25 MiB
// when the model has no figure (e.g. across hosts). The same on every rank: the model's
// parameters are agreed at init.
std::size_t Bucketer::auto_bucket_bytes(const Communicator& comm) {
  constexpr std::size_t kFallback = 25u << 20, kLarge = std::size_t(1) << 30;
  auto busbw = [&](std::size_t bytes) {
    const Estimate e = comm.estimate("all_reduce", bytes / 4, DataType::kFloat32);
    return e.predicted_us > 0 ? double(bytes) / e.predicted_us : -1.0;
  };
  const double asymptote = busbw(kLarge);
  if (asymptote <= 0) return kFallback;
  for (std::size_t bytes = 64 << 10; bytes < kLarge; bytes *= 2)
    if (busbw(bytes) >= 0.9 * asymptote) return bytes;
  return kLarge;
}

std::size_t Bucketer::bucket_bytes() const { return state_->options.bucket_bytes; }

Bucketer::Bucketer(Communicator& comm, BucketerOptions options)
    : state_(std::make_unique<State>()) {
  if (options.bucket_bytes == 0) options.bucket_bytes = auto_bucket_bytes(comm);
  state_->comm = &comm;
  state_->options = options;
}

Bucketer::~Bucketer() {
  // In-flight all_reduces still use the bucket buffers: let them finish first.
  if (state_) state_->wait_all();
}

std::size_t Bucketer::add(void* data, std::size_t count, DataType dtype) {
  if (state_->frozen)
    throw Error(ErrorCode::kInvalidArgument,
                "Bucketer::add after the buckets were laid out (by the first mark_ready(), "
                "finish() or num_buckets()): register every tensor first");
  api::throw_if_error(api::check_dtype(dtype));
  if (count == 0) throw Error(ErrorCode::kInvalidArgument, "count must be > 0");
  api::throw_if_error(api::check_count("count", count, dtype, 1));
  api::throw_if_error(api::check_buffer("data", data, count));
  state_->tensors.push_back(Tensor{data, count, dtype});
  return state_->tensors.size() - 1;
}

void Bucketer::mark_ready(std::size_t index) {
  State& s = *state_;
  if (index >= s.tensors.size())
    throw Error(ErrorCode::kInvalidArgument,
                str_printf("index %zu is not a registered tensor (%zu registered)", index,
                           s.tensors.size()));
  s.begin_iteration();
  Tensor& t = s.tensors[index];
  if (t.ready)
    throw Error(ErrorCode::kInvalidArgument,
                str_printf("tensor %zu was already marked ready in this iteration", index));
  t.ready = true;
  --s.buckets[t.bucket].waiting;
  s.start_ready();
}

void Bucketer::finish() {
  State& s = *state_;
  if (s.tensors.empty()) return;
  s.begin_iteration();
  for (std::size_t i = 0; i < s.tensors.size(); ++i)
    if (!s.tensors[i].ready) {
      s.tensors[i].ready = true;
      --s.buckets[s.tensors[i].bucket].waiting;
    }
  std::optional<Error> first;
  try {
    s.start_ready();
  } catch (const Error& e) {
    first = e;
  }
  std::optional<Error> waited = s.wait_all();
  s.in_iteration = false;
  if (first) throw *first;
  if (waited) throw *waited;
  for (Bucket& b : s.buckets)
    if (!b.buffer.empty()) s.unpack(b);
}

std::size_t Bucketer::num_buckets() const {
  if (!state_->frozen) state_->freeze();
  return state_->buckets.size();
}

std::size_t Bucketer::num_tensors() const { return state_->tensors.size(); }

}  // namespace chorus
