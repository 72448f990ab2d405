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
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "chorus/communicator.h"

namespace chorus::torch_backend {

// A chorus::Store on torch's c10d::Store (the PrefixStore of the group being created).
class C10dStore : public chorus::Store {
 public:
  explicit C10dStore(c10::intrusive_ptr<c10d::Store> store) : store_(std::move(store)) {}
  void set(const std::string& key, const std::vector<std::uint8_t>& value) override;
  std::vector<std::uint8_t> get(const std::string& key, std::chrono::milliseconds timeout) override;
  std::int64_t add(const std::string& key, std::int64_t delta) override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  bool check(const std::string& key) override;

 private:
  c10::intrusive_ptr<c10d::Store> store_;
};

// What a completion callback needs (held by the callback, never holding the chorus::Work,
// so there is no reference cycle): tensors kept alive until done, the Future, the copy
// step run after the transfer (gathering into lists), the error.
struct WorkState {
  std::vector<at::Tensor> outputs;    // the Future's value and Work.result()
  std::vector<at::Tensor> keepalive;  // buffers Chorus reads or writes until done
  std::function<void()> finish;       // runs on success before the Future completes
  c10::intrusive_ptr<c10::ivalue::Future> future;
  std::mutex mu;
  bool done = false;
  std::exception_ptr error;
};

// Where background threads (Chorus's completing thread, torch's inter-op pool) leave the
// WorkStates they are done with, so that their tensors are released on a caller's thread
// (the next operation's issuing thread, or the group's destruction). Releasing a tensor
// whose Python object is owned by C++ takes the GIL, and a background thread taking the
// GIL while the interpreter finalizes is killed by Python (pthread_exit -> std::terminate).
class Graveyard {
 public:
  void bury(std::shared_ptr<WorkState> state);
  void clear();  // releases what was buried, on the calling thread

 private:
  std::mutex mu_;
  std::vector<std::shared_ptr<WorkState>> buried_;
};

class ChorusWork : public c10d::Work {
 public:
  ChorusWork(int rank, c10d::OpType type, chorus::Work work, std::shared_ptr<WorkState> state);
  bool isCompleted() override;
  bool isSuccess() const override;
  std::exception_ptr exception() const override;
  std::vector<at::Tensor> result() override;
  bool wait(std::chrono::milliseconds timeout = kNoTimeout) override;
  void synchronize() override {}
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return state_->future; }
  // recvAnysource: the sender's rank once the message has arrived (-1 before; torch's
  // Work._source_rank()).
  int sourceRank() const override { return work_.source(); }

 private:
  chorus::Work work_;
  std::shared_ptr<WorkState> state_;
};

// Waits (at most `timeout`) until every operation issued by any ProcessGroupChorus has
// completed and its Future's callbacks have run; false on timeout. chorus/torch.py calls
// it at exit: a Python .then() callback still running on torch's inter-op pool while the
// interpreter finalizes would be killed by Python (std::terminate).
bool drain(std::chrono::milliseconds timeout);

// The text of a failed operation's RuntimeError: "<op> failed: <code>: <message>" (code
// as chorus::to_string names it: "peer_lost", ...), and for kTimeout "<op> failed with a
// timeout (timeout): <message>", so that torch's tests and users' regexes
// (" (Timed out|closed|timeout) ") recognise it.
std::string failure_text(const std::string& op, chorus::ErrorCode code, const std::string& message);

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
  std::shared_ptr<Graveyard> graveyard_ = std::make_shared<Graveyard>();
  std::unique_ptr<chorus::Communicator> comm_;
};

}  // namespace chorus::torch_backend
