// ProcessGroupChorus and ChorusWork (see process_group.h).
#include "process_group.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/ivalue.h>

#include <condition_variable>
#include <numeric>
#include <stdexcept>

#include "chorus/status.h"
#include "profiling.h"
#include "tensors.h"

namespace chorus::torch_backend {

// --- C10dStore ------------------------------------------------------------------------

void C10dStore::set(const std::string& key, const std::vector<std::uint8_t>& value) {
  store_->set(key, value);
}

std::vector<std::uint8_t> C10dStore::get(const std::string& key, std::chrono::milliseconds timeout) {
  wait({key}, timeout);
  return store_->get(key);
}

std::int64_t C10dStore::add(const std::string& key, std::int64_t delta) {
  return store_->add(key, delta);
}

void C10dStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  try {
    store_->wait(keys, timeout);
  } catch (const std::exception& e) {
    throw chorus::Error(ErrorCode::kTimeout, std::string("torch store: waiting for '") +
                                                 (keys.empty() ? "" : keys[0]) + "' failed: " +
                                                 e.what());
  }
}

bool C10dStore::check(const std::string& key) { return store_->check({key}); }

// --- Operations in flight (drain) -----------------------------------------------------

namespace {
std::mutex g_pending_mu;
std::condition_variable g_pending_cv;
std::int64_t g_pending = 0;

void pending_add() {
  std::lock_guard<std::mutex> lock(g_pending_mu);
  ++g_pending;
}

void pending_done() {
  std::lock_guard<std::mutex> lock(g_pending_mu);
  if (--g_pending == 0) g_pending_cv.notify_all();
}
}  // namespace

bool drain(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(g_pending_mu);
  return g_pending_cv.wait_for(lock, timeout, [] { return g_pending == 0; });
}

// --- Graveyard ------------------------------------------------------------------------

void Graveyard::bury(std::shared_ptr<WorkState> state) {
  std::lock_guard<std::mutex> lock(mu_);
  buried_.push_back(std::move(state));
}

void Graveyard::clear() {
  std::vector<std::shared_ptr<WorkState>> dead;
  {
    std::lock_guard<std::mutex> lock(mu_);
    dead.swap(buried_);
  }
}  // `dead` released here, outside the lock

std::string failure_text(const std::string& op, chorus::ErrorCode code, const std::string& message) {
  if (code == chorus::ErrorCode::kTimeout)
    return op + " failed with a timeout (" + chorus::to_string(code) + "): " + message;
  return op + " failed: " + chorus::to_string(code) + ": " + message;
}

// --- ChorusWork -----------------------------------------------------------------------

ChorusWork::ChorusWork(int rank, c10d::OpType type, chorus::Work work,
                       std::shared_ptr<WorkState> state)
    : c10d::Work(rank, type), work_(std::move(work)), state_(std::move(state)) {}

bool ChorusWork::isCompleted() {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->done;
}

bool ChorusWork::isSuccess() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->done && !state_->error;
}

std::exception_ptr ChorusWork::exception() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->error;
}

std::vector<at::Tensor> ChorusWork::result() { return state_->outputs; }

bool ChorusWork::wait(std::chrono::milliseconds timeout) {
  // Torch's binding releases the GIL around wait().
  try {
    if (timeout == ::kNoTimeout) {
      work_.wait();
    } else if (!work_.wait(timeout)) {
      TORCH_CHECK(false, "chorus backend: ", work_.op(), " (seq ", work_.seq(),
                  ") still running when wait() reached its timeout of ", timeout.count(), " ms");
    }
  } catch (const chorus::Error& e) {
    TORCH_CHECK(false, "chorus backend: ", failure_text(work_.op(), e.code(), e.message()));
  }
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (state_->error) std::rethrow_exception(state_->error);
  }
  // The Future completes on torch's inter-op pool right after: once wait() returns, so
  // has it (users read work.get_future().value() after wait()).
  state_->future->wait();
  return true;
}

// --- ProcessGroupChorus ---------------------------------------------------------------

ProcessGroupChorus::ProcessGroupChorus(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                       int size, std::chrono::milliseconds timeout)
    : c10d::ProcessGroup(rank, size), store_(store), timeout_(timeout) {
  chorus::Options options;
  options.timeout = timeout;
  try {
    comm_ = std::make_unique<chorus::Communicator>(chorus::Communicator::init(
        rank, size, std::make_shared<C10dStore>(store), options));
  } catch (const chorus::Error& e) {
    TORCH_CHECK(false, "chorus backend: creating the communicator failed: ", e.what());
  }
  p2p_stream_ = comm_->create_stream("p2p");
  init();
}

ProcessGroupChorus::~ProcessGroupChorus() {
  comm_.reset();  // completes or fails what is in flight
  graveyard_->clear();
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::launch(
    c10d::OpType type, std::vector<at::Tensor> outputs, std::vector<at::Tensor> keepalive,
    const std::function<chorus::Work()>& issue, std::function<void()> finish) {
  auto state = std::make_shared<WorkState>();
  state->outputs = std::move(outputs);
  state->keepalive = std::move(keepalive);
  state->finish = std::move(finish);
  state->future = c10::make_intrusive<c10::ivalue::Future>(
      c10::ListType::create(c10::TensorType::get()));
  graveyard_->clear();  // earlier operations' tensors, released on this thread
  std::shared_ptr<OpRange> range = OpRange::begin(type);  // torch.profiler: "chorus:<op>"
  chorus::Work work;
  {
    std::lock_guard<std::mutex> lock(issue_mu_);
    try {
      work = issue();
      issued_.fetch_add(1, std::memory_order_relaxed);
    } catch (const chorus::Error& e) {
      TORCH_CHECK(false, "chorus backend: ", e.what());
    }
  }
  pending_add();  // until the Future's callbacks have run (drain)
  auto result = c10::make_intrusive<ChorusWork>(rank_, type, work, state);
  // The background threads hold the state through a slot they empty when done with it,
  // then bury it (see Graveyard): they never release tensors themselves.
  struct Slot {
    std::shared_ptr<WorkState> state;
  };
  auto slot = std::make_shared<Slot>(Slot{state});
  state.reset();
  std::shared_ptr<Graveyard> graveyard = graveyard_;
  work.on_complete([slot, graveyard, range](const chorus::Work& done) {
    if (range) range->end();
    std::shared_ptr<WorkState> state = std::move(slot->state);
    if (!state) return;
    std::exception_ptr error;
    if (done.state() == chorus::Work::State::kFailed) {
      error = std::make_exception_ptr(std::runtime_error(
          "chorus backend: " + failure_text(done.op(), done.code(), done.message())));
    } else if (state->finish) {
      try {
        state->finish();
      } catch (...) {
        error = std::current_exception();
      }
    }
    {
      std::lock_guard<std::mutex> lock(state->mu);
      state->done = true;
      state->error = error;
      // keepalive and finish stay until the state is released on a caller's thread.
    }
    // The Future's callbacks (DDP comm hooks) may issue new operations, which Chorus
    // forbids on its completing thread: complete it on torch's inter-op pool instead.
    slot->state = std::move(state);
    at::launch([slot, graveyard, error] {
      std::shared_ptr<WorkState> state = std::move(slot->state);
      if (error) {
        state->future->setError(error);
      } else {
        state->future->markCompleted(c10::IValue(state->outputs));
      }
      graveyard->bury(std::move(state));
      pending_done();
    });
  });
  return result;
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::broadcast(std::vector<at::Tensor>& tensors,
                                                             const c10d::BroadcastOptions& opts) {
  at::Tensor& t = single(tensors, "tensors");
  TORCH_CHECK(opts.rootTensor == 0, "chorus backend: rootTensor must be 0 (CPU only)");
  return launch(c10d::OpType::BROADCAST, tensors, {}, [&] {
    return comm_->broadcast_async(t.data_ptr(), t.data_ptr(), count(t), to_dtype(t, "tensor"),
                                  static_cast<int>(opts.rootRank));
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::allreduce(std::vector<at::Tensor>& tensors,
                                                             const c10d::AllreduceOptions& opts) {
  if (tensors.size() == 1 && tensors[0].defined() && tensors[0].is_sparse())
    return allreduce_sparse(tensors[0], opts);
  at::Tensor& t = single(tensors, "tensors");
  const auto op = to_op(opts.reduceOp);
  return launch(c10d::OpType::ALLREDUCE, tensors, {}, [&] {
    return comm_->all_reduce_async(t.data_ptr(), t.data_ptr(), count(t), to_dtype(t, "tensor"), op);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::allreduce_coalesced(
    std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) {
  TORCH_CHECK(!tensors.empty(), "chorus backend: allreduce_coalesced needs at least one tensor");
  for (const auto& t : tensors) {
    check_tensor(t, "tensors", /*direct=*/false);
    check_same(tensors[0], t, "tensors");
  }
  const auto op = to_op(opts.reduceOp);
  at::Tensor flat = flat_cat(tensors);
  std::vector<at::Tensor> outs = tensors;
  return launch(
      c10d::OpType::ALLREDUCE_COALESCED, tensors, {flat},
      [&] {
        return comm_->all_reduce_async(flat.data_ptr(), flat.data_ptr(), count(flat),
                                       to_dtype(flat, "tensors"), op);
      },
      [flat, outs]() mutable { scatter_copy(flat, outs); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::reduce(std::vector<at::Tensor>& tensors,
                                                          const c10d::ReduceOptions& opts) {
  at::Tensor& t = single(tensors, "tensors");
  const auto op = to_op(opts.reduceOp);
  return launch(c10d::OpType::REDUCE, tensors, {}, [&] {
    return comm_->reduce_async(t.data_ptr(), t.data_ptr(), count(t), to_dtype(t, "tensor"), op,
                               static_cast<int>(opts.rootRank));
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::allgather(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions&) {
  at::Tensor& in = single(inputs, "input_tensor");
  TORCH_CHECK(outputs.size() == 1, "chorus backend: expected one output list, got ",
              outputs.size());
  check_list(outputs[0], size_, in.numel(), in, "output_tensor_list");
  at::Tensor flat = at::empty({size_ * in.numel()}, in.options());
  std::vector<at::Tensor> outs = outputs[0];
  return launch(
      c10d::OpType::ALLGATHER, outs, {in, flat},
      [&] {
        return comm_->all_gather_async(in.data_ptr(), flat.data_ptr(), count(in),
                                       to_dtype(in, "input_tensor"));
      },
      [flat, outs]() mutable { scatter_copy(flat, outs); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::_allgather_base(
    at::Tensor& output, at::Tensor& input, const c10d::AllgatherOptions&) {
  check_tensor(input, "input_tensor");
  check_tensor(output, "output_tensor");
  check_same(input, output, "output_tensor");
  TORCH_CHECK(output.numel() == size_ * input.numel(), "chorus backend: output_tensor must have ",
              size_, " x ", input.numel(), " elements, got ", output.numel());
  return launch(c10d::OpType::_ALLGATHER_BASE, {output}, {input}, [&] {
    return comm_->all_gather_async(input.data_ptr(), output.data_ptr(), count(input),
                                   to_dtype(input, "input_tensor"));
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::gather(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::GatherOptions& opts) {
  at::Tensor& in = single(inputs, "tensor");
  const int root = static_cast<int>(opts.rootRank);
  TORCH_CHECK(root >= 0 && root < size_, "chorus backend: dst ", root, " is out of range");
  at::Tensor flat;
  std::vector<at::Tensor> outs;
  if (rank_ == root) {
    TORCH_CHECK(outputs.size() == 1, "chorus backend: gather_list is required on the root");
    check_list(outputs[0], size_, in.numel(), in, "gather_list");
    outs = outputs[0];
    flat = at::empty({size_ * in.numel()}, in.options());
  } else {
    TORCH_CHECK(outputs.empty() || outputs[0].empty(),
                "chorus backend: gather_list must be empty on non-root ranks");
  }
  std::function<void()> finish;
  if (rank_ == root) finish = [flat, outs]() mutable { scatter_copy(flat, outs); };
  return launch(
      c10d::OpType::GATHER, outs, {in, flat},
      [&] {
        return comm_->gather_async(in.data_ptr(), flat.defined() ? flat.data_ptr() : nullptr,
                                   count(in), to_dtype(in, "tensor"), root);
      },
      std::move(finish));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::scatter(
    std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ScatterOptions& opts) {
  at::Tensor& out = single(outputs, "tensor");
  const int root = static_cast<int>(opts.rootRank);
  TORCH_CHECK(root >= 0 && root < size_, "chorus backend: src ", root, " is out of range");
  at::Tensor flat;
  if (rank_ == root) {
    TORCH_CHECK(inputs.size() == 1, "chorus backend: scatter_list is required on the root");
    check_list(inputs[0], size_, out.numel(), out, "scatter_list");
    flat = flat_cat(inputs[0]);
  } else {
    TORCH_CHECK(inputs.empty() || inputs[0].empty(),
                "chorus backend: scatter_list must be empty on non-root ranks");
  }
  return launch(c10d::OpType::SCATTER, outputs, {flat}, [&] {
    return comm_->scatter_async(flat.defined() ? flat.data_ptr() : nullptr, out.data_ptr(),
                                count(out), to_dtype(out, "tensor"), root);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::reduce_scatter(
    std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  at::Tensor& out = single(outputs, "output");
  TORCH_CHECK(inputs.size() == 1, "chorus backend: expected one input list, got ", inputs.size());
  check_list(inputs[0], size_, out.numel(), out, "input_list");
  const auto op = to_op(opts.reduceOp);
  at::Tensor flat = flat_cat(inputs[0]);
  return launch(c10d::OpType::REDUCE_SCATTER, outputs, {flat}, [&] {
    return comm_->reduce_scatter_async(flat.data_ptr(), out.data_ptr(), count(out),
                                       to_dtype(out, "output"), op);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::_reduce_scatter_base(
    at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) {
  check_tensor(input, "input");
  check_tensor(output, "output");
  check_same(input, output, "output");
  TORCH_CHECK(input.numel() == size_ * output.numel(), "chorus backend: input must have ", size_,
              " x ", output.numel(), " elements, got ", input.numel());
  const auto op = to_op(opts.reduceOp);
  return launch(c10d::OpType::_REDUCE_SCATTER_BASE, {output}, {input}, [&] {
    return comm_->reduce_scatter_async(input.data_ptr(), output.data_ptr(), count(output),
                                       to_dtype(output, "output"), op);
  });
}

namespace {

// Element counts and displacements of an all_to_all_v side: `splits` are rows of dim 0
// (empty: equal split).
void v_layout(const at::Tensor& t, const std::vector<int64_t>& splits, int size,
              const char* what, std::vector<std::size_t>& counts,
              std::vector<std::size_t>& displs) {
  TORCH_CHECK(t.dim() >= 1, "chorus backend: ", what, " must have at least one dimension");
  const int64_t rows = t.size(0);
  const int64_t row = rows == 0 ? 0 : t.numel() / rows;
  std::vector<int64_t> s = splits;
  if (s.empty()) {
    TORCH_CHECK(rows % size == 0, "chorus backend: dim 0 of ", what, " (", rows,
                ") is not divisible by the group size ", size, "; pass split sizes");
    s.assign(size, rows / size);
  }
  TORCH_CHECK(static_cast<int>(s.size()) == size, "chorus backend: ", what, " split sizes need ",
              size, " entries, got ", s.size());
  int64_t total = 0;
  for (int64_t x : s) {
    TORCH_CHECK(x >= 0, "chorus backend: negative split size in ", what);
    total += x;
  }
  TORCH_CHECK(total == rows, "chorus backend: ", what, " split sizes sum to ", total,
              " but dim 0 is ", rows);
  counts.clear();
  displs.clear();
  std::size_t off = 0;
  for (int64_t x : s) {
    counts.push_back(static_cast<std::size_t>(x * row));
    displs.push_back(off);
    off += static_cast<std::size_t>(x * row);
  }
}

}  // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::alltoall_base(
    at::Tensor& output, at::Tensor& input, std::vector<int64_t>& output_splits,
    std::vector<int64_t>& input_splits, const c10d::AllToAllOptions&) {
  check_tensor(input, "input");
  check_tensor(output, "output");
  check_same(input, output, "output");
  std::vector<std::size_t> sc, sd, rc, rd;
  v_layout(input, input_splits, size_, "input", sc, sd);
  v_layout(output, output_splits, size_, "output", rc, rd);
  // Not in place: a copy of the input when the caller passed the same memory.
  at::Tensor src = input.is_same(output) ? input.clone() : input;
  return launch(c10d::OpType::ALLTOALL_BASE, {output}, {src}, [&] {
    return comm_->all_to_all_v_async(src.data_ptr(), sc, sd, output.data_ptr(), rc, rd,
                                     to_dtype(input, "input"));
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::alltoall(std::vector<at::Tensor>& outputs,
                                                            std::vector<at::Tensor>& inputs,
                                                            const c10d::AllToAllOptions&) {
  TORCH_CHECK(static_cast<int>(inputs.size()) == size_ &&
                  static_cast<int>(outputs.size()) == size_,
              "chorus backend: all_to_all needs ", size_, " input and output tensors, got ",
              inputs.size(), " and ", outputs.size());
  std::vector<std::size_t> sc, sd, rc, rd;
  std::size_t soff = 0, roff = 0;
  for (int p = 0; p < size_; ++p) {
    check_tensor(inputs[p], "input_tensor_list", /*direct=*/false);
    check_tensor(outputs[p], "output_tensor_list", /*direct=*/false);
    check_same(inputs[0], inputs[p], "input_tensor_list");
    check_same(inputs[0], outputs[p], "output_tensor_list");
    sc.push_back(count(inputs[p]));
    sd.push_back(soff);
    soff += count(inputs[p]);
    rc.push_back(count(outputs[p]));
    rd.push_back(roff);
    roff += count(outputs[p]);
  }
  at::Tensor in = flat_cat(inputs);
  at::Tensor out = at::empty({static_cast<int64_t>(roff)}, inputs[0].options());
  std::vector<at::Tensor> outs = outputs;
  return launch(
      c10d::OpType::ALLTOALL, outs, {in, out},
      [&] {
        return comm_->all_to_all_v_async(in.data_ptr(), sc, sd, out.data_ptr(), rc, rd,
                                         to_dtype(in, "input_tensor_list"));
      },
      [out, outs]() mutable { scatter_copy(out, outs); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::barrier(const c10d::BarrierOptions&) {
  return launch(c10d::OpType::BARRIER, {}, {}, [&] { return comm_->barrier_async(); });
}

}  // namespace chorus::torch_backend
