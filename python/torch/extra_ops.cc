// ProcessGroupChorus's less common operations: all_gather_coalesced, all_reduce of sparse
// COO tensors (gloo's algorithm: gather every rank's indices and values, sum, coalesce) and
// monitoredBarrier (through the store, so a missing rank never disturbs the data path).
#include <algorithm>
#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "process_group.h"
#include "tensors.h"

namespace chorus::torch_backend {

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::allgather_coalesced(
    std::vector<std::vector<at::Tensor>>& output_lists, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions&) {
  TORCH_CHECK(!inputs.empty(), "chorus backend: all_gather_coalesced needs at least one input");
  TORCH_CHECK(static_cast<int>(output_lists.size()) == size_, "chorus backend: ",
              "output_tensor_lists must hold ", size_, " lists (one per rank), got ",
              output_lists.size());
  for (const auto& t : inputs) {
    check_tensor(t, "input_tensor_list", /*direct=*/false);
    check_same(inputs[0], t, "input_tensor_list");
  }
  std::vector<at::Tensor> outs;  // rank-major: rank r's block holds its inputs in order
  for (const auto& list : output_lists) {
    TORCH_CHECK(list.size() == inputs.size(), "chorus backend: every list of ",
                "output_tensor_lists must hold ", inputs.size(), " tensors, got ", list.size());
    for (std::size_t i = 0; i < list.size(); ++i) {
      check_tensor(list[i], "output_tensor_lists", /*direct=*/false);
      check_same(inputs[0], list[i], "output_tensor_lists");
      TORCH_CHECK(list[i].numel() == inputs[i].numel(), "chorus backend: output_tensor_lists ",
                  "tensor ", i, " has ", list[i].numel(), " elements, input ", i, " has ",
                  inputs[i].numel());
      outs.push_back(list[i]);
    }
  }
  at::Tensor in = flat_cat(inputs);
  at::Tensor flat = at::empty({size_ * in.numel()}, in.options());
  return launch(
      c10d::OpType::ALLGATHER_COALESCED, outs, {in, flat},
      [&] {
        return comm_->all_gather_async(in.data_ptr(), flat.data_ptr(), count(in),
                                       to_dtype(in, "input_tensor_list"));
      },
      [flat, outs]() mutable { scatter_copy(flat, outs); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::allreduce_sparse(
    at::Tensor& t, const c10d::AllreduceOptions& opts) {
  TORCH_CHECK(t.device().is_cpu(), "chorus backend: tensor is on device ", t.device(),
              "; only CPU tensors are supported");
  TORCH_CHECK(t.layout() == at::kSparse, "chorus backend: tensor is neither dense nor sparse COO");
  TORCH_CHECK(opts.reduceOp.op_ == c10d::ReduceOp::SUM,
              "chorus backend: all_reduce of a sparse tensor supports ReduceOp.SUM only");
  at::Tensor in = t.coalesce();
  const int64_t sparse_dim = in.sparse_dim();
  std::vector<int64_t> dense_shape(t.sizes().begin() + sparse_dim, t.sizes().end());
  at::Tensor values = in.values().contiguous();
  const chorus::DataType vtype = to_dtype(values, "tensor (its values)");
  int64_t nnz = in._nnz();
  // Every rank's nnz, then its indices padded to the largest nnz (blocking: the sizes of
  // the next step depend on them), then the padded values (the returned Work).
  std::vector<int64_t> nnzs(size_);
  at::Tensor all_idx;
  int64_t most = 0;
  {
    std::lock_guard<std::mutex> lock(issue_mu_);
    try {
      comm_->all_gather(&nnz, nnzs.data(), 1, chorus::DataType::kInt64);
      for (int64_t n : nnzs) most = std::max(most, n);
      at::Tensor idx = at::zeros({sparse_dim, most}, at::kLong);
      idx.narrow(1, 0, nnz).copy_(in.indices());
      all_idx = at::empty({size_, sparse_dim, most}, at::kLong);
      comm_->all_gather(idx.data_ptr(), all_idx.data_ptr(), count(idx), chorus::DataType::kInt64);
    } catch (const chorus::Error& e) {
      TORCH_CHECK(false, "chorus backend: ", failure_text("all_reduce (sparse)", e.code(),
                                                          e.message()));
    }
  }
  std::vector<int64_t> vshape{most};
  vshape.insert(vshape.end(), dense_shape.begin(), dense_shape.end());
  at::Tensor vals = at::zeros(vshape, values.options());
  vals.narrow(0, 0, nnz).copy_(values);
  std::vector<int64_t> all_shape{size_};
  all_shape.insert(all_shape.end(), vshape.begin(), vshape.end());
  at::Tensor all_vals = at::empty(all_shape, values.options());
  at::Tensor out = t;
  auto finish = [out, all_idx, all_vals, nnzs]() mutable {
    std::vector<at::Tensor> idx, val;
    for (std::size_t r = 0; r < nnzs.size(); ++r) {
      idx.push_back(all_idx[r].narrow(1, 0, nnzs[r]));
      val.push_back(all_vals[r].narrow(0, 0, nnzs[r]));
    }
    at::Tensor sum = at::sparse_coo_tensor(at::cat(idx, 1), at::cat(val, 0), out.sizes(),
                                           out.options())
                         .coalesce();
    out.copy_(sum);
  };
  return launch(
      c10d::OpType::ALLREDUCE, {t}, {vals, all_vals},
      [&] { return comm_->all_gather_async(vals.data_ptr(), all_vals.data_ptr(), count(vals), vtype); },
      std::move(finish));
}

void ProcessGroupChorus::monitoredBarrier(const c10d::BarrierOptions& opts, bool wait_all_ranks) {
  using std::chrono::milliseconds;
  const milliseconds timeout = opts.timeout == c10d::kUnsetTimeout ? timeout_ : opts.timeout;
  TORCH_CHECK(timeout.count() > 0, "Rank ", rank_, " timed out in monitoredBarrier after ",
              timeout.count(), " ms");
  const std::string base = "chorus_monitored_barrier/" + std::to_string(monitored_barriers_++) + "/";
  store_->set(base + "arrived/" + std::to_string(rank_), std::vector<uint8_t>{1});
  if (rank_ != 0) {
    try {
      store_->wait({base + "released"}, timeout);
    } catch (const std::exception&) {
      TORCH_CHECK(false, "Rank ", rank_, " successfully reached monitoredBarrier, but received ",
                  "errors while waiting for send/recv from rank 0: rank 0 did not release the ",
                  "barrier within ", timeout.count(), " ms (see rank 0 for the missing ranks)");
    }
    return;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<int> missing;
  for (int r = 1; r < size_; ++r) {
    const std::string key = base + "arrived/" + std::to_string(r);
    const auto left = std::chrono::duration_cast<milliseconds>(deadline -
                                                               std::chrono::steady_clock::now());
    bool arrived = false;
    if (missing.empty() && left.count() > 0) {
      try {
        store_->wait({key}, left);
        arrived = true;
      } catch (const std::exception&) {
      }
    } else {
      arrived = store_->check({key});
    }
    if (arrived) continue;
    missing.push_back(r);
    if (!wait_all_ranks) break;
  }
  if (!missing.empty()) {
    std::string list;
    for (int r : missing) list += (list.empty() ? "" : ", ") + std::to_string(r);
    TORCH_CHECK(false, missing.size() == 1 ? "Rank " : "Ranks ", list,
                " failed to pass monitoredBarrier in ", timeout.count(), " ms");
  }
  store_->set(base + "released", std::vector<uint8_t>{1});
}

void ProcessGroupChorus::setSequenceNumberForGroup() {
  const std::string key = "chorus_sequence_number";
  if (rank_ == 0) {
    std::random_device rd;
    seq_start_ = (static_cast<std::uint64_t>(rd()) << 32 | rd()) >> 16;  // room to count up
    const std::string text = std::to_string(seq_start_);
    store_->set(key, std::vector<uint8_t>(text.begin(), text.end()));
  } else {
    const std::vector<uint8_t> raw = store_->get(key);
    seq_start_ = std::stoull(std::string(raw.begin(), raw.end()));
  }
  issued_.store(0, std::memory_order_relaxed);
}

uint64_t ProcessGroupChorus::getSequenceNumberForGroup() {
  return seq_start_ + issued_.load(std::memory_order_relaxed);
}

}  // namespace chorus::torch_backend
