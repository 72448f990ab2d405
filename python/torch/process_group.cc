// ProcessGroupChorus (see process_group.h): creating and destroying the group, and the
// collectives, each a check of torch's arguments and one launch() of a *_async call.
#include "process_group.h"

#include <ATen/ATen.h>

#include "tensors.h"

namespace chorus::torch_backend {

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
  Graveyard::instance().clear();
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
