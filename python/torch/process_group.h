// ProcessGroupChorus: the torch.distributed backend "chorus" (torch 1.13's
// c10d::ProcessGroup) on a chorus::Communicator. CPU, contiguous tensors of the dtypes
// Chorus has; every operation is issued asynchronously on the communicator's default
// stream and returns a ChorusWork whose Future completes from Chorus's own completion
// callback. Newer torch (>= 2.0) would subclass c10d::Backend with the same method bodies.
#pragma once
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "c10d_store.h"
#include "chorus/communicator.h"
#include "work.h"

namespace chorus::torch_backend {

class ProcessGroupChorus : public c10d::ProcessGroup {
 public:
  // Collective over the group: rendezvous of a new chorus::Communicator through `store`;
  // `timeout` becomes its per-operation deadline (Options::timeout).
  ProcessGroupChorus(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                     std::chrono::milliseconds timeout);
  ~ProcessGroupChorus() override;

  const std::string getBackendName() const override { return "chorus"; }

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(
      std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors,
                                        const c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs,
                                        std::vector<at::Tensor>& inputs,
                                        const c10d::GatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs,
                                         std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& outputs,
                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(
      at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                               std::vector<int64_t>& output_splits,
                                               std::vector<int64_t>& input_splits,
                                               const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs,
                                          std::vector<at::Tensor>& inputs,
                                          const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dst, int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int src, int tag) override;
  // Chorus's recv_any_async on the "p2p" stream (it waits for its source apart, so later
  // sends are not held back); the Work's sourceRank() names the sender.
  c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor>& tensors, int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts) override;

  // p2p.cc: torch's coalescing (batch_isend_irecv) is a Chorus group: the operations issued
  // in between are recorded and run together at endCoalescing(), which returns when they
  // have completed (their Works then are too).
  void startCoalescing() override;
  void endCoalescing(std::vector<c10::intrusive_ptr<c10d::Work>>& reqs) override;

  // extra_ops.cc: all_gather_coalesced (one all_gather of the inputs packed together).
  c10::intrusive_ptr<c10d::Work> allgather_coalesced(
      std::vector<std::vector<at::Tensor>>& output_lists, std::vector<at::Tensor>& inputs,
      const c10d::AllgatherOptions& opts) override;
  // extra_ops.cc: rank 0 waits (opts.timeout, else the group's timeout) for every rank to
  // arrive, through the store (not the data path); it throws naming the first rank that did
  // not ("Rank 1 failed to pass monitoredBarrier in 2000 ms"), or all of them with
  // `wait_all_ranks`; the other ranks throw when rank 0 does not release them in time.
  void monitoredBarrier(const c10d::BarrierOptions& opts, bool wait_all_ranks) override;
  // extra_ops.cc: torch sets one for gloo and nccl groups (gloo's way: rank 0 draws a
  // random start and shares it through the store); get = start + operations issued since.
  void setSequenceNumberForGroup() override;
  uint64_t getSequenceNumberForGroup() override;

 private:
  // Issues `issue` (a call of comm_'s *_async) under the issue lock, translating chorus
  // errors, and wraps the result.
  c10::intrusive_ptr<c10d::Work> launch(c10d::OpType type, std::vector<at::Tensor> outputs,
                                        std::vector<at::Tensor> keepalive,
                                        const std::function<chorus::Work()>& issue,
                                        std::function<void()> finish = {});

  // extra_ops.cc: all_reduce of a sparse COO tensor: the indices and values of every rank
  // gathered, summed and coalesced (gloo's result); SUM only.
  c10::intrusive_ptr<c10d::Work> allreduce_sparse(at::Tensor& t, const c10d::AllreduceOptions& opts);

  std::mutex issue_mu_;
  c10::intrusive_ptr<c10d::Store> store_;  // monitoredBarrier's channel
  std::chrono::milliseconds timeout_;
  std::uint64_t monitored_barriers_ = 0;   // names each one's store keys
  std::uint64_t seq_start_ = 0;            // setSequenceNumberForGroup()
  std::atomic<std::uint64_t> issued_{0};   // operations issued (launch())
  chorus::Stream p2p_stream_;              // send/recv: never behind a collective
  std::unique_ptr<chorus::Communicator> comm_;
};

}  // namespace chorus::torch_backend
