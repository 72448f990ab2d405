// Stress: dimension communicators, streams, and one verified step.
#include "stress.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <thread>

#include "data.h"

namespace chorus_stress {

namespace {

using Clock = std::chrono::steady_clock;

std::string label_of(const StressConfig& cfg, const OpSpec& op) {
  if (cfg.pattern == Pattern::k5d) return std::string(kDimNames[op.dim]) + " " + kind_name(op.kind);
  return std::string(kind_name(op.kind)) + " " + chorus::to_string(op.dtype);
}

// Starts `op` on `comm` (asynchronously on `stream`, or blocking when `stream` is null).
chorus::Work issue(chorus::Communicator& comm, const OpSpec& op, const void* send, void* recv,
                   const chorus::Stream* stream) {
  const auto dt = op.dtype;
  const auto sum = chorus::ReduceOp::kSum;
  const std::size_t c = op.count;
  if (stream == nullptr) {
    switch (op.kind) {
      case Kind::kAllReduce: comm.all_reduce(send, recv, c, dt, sum); break;
      case Kind::kAllGather: comm.all_gather(send, recv, c, dt); break;
      case Kind::kReduceScatter: comm.reduce_scatter(send, recv, c, dt, sum); break;
      case Kind::kAllToAll: comm.all_to_all(send, recv, c, dt); break;
      case Kind::kBroadcast: comm.broadcast(send, recv, c, dt, op.root); break;
    }
    return chorus::Work();
  }
  switch (op.kind) {
    case Kind::kAllReduce: return comm.all_reduce_async(send, recv, c, dt, sum, *stream);
    case Kind::kAllGather: return comm.all_gather_async(send, recv, c, dt, *stream);
    case Kind::kReduceScatter: return comm.reduce_scatter_async(send, recv, c, dt, sum, *stream);
    case Kind::kAllToAll: return comm.all_to_all_async(send, recv, c, dt, *stream);
    case Kind::kBroadcast: return comm.broadcast_async(send, recv, c, dt, op.root, *stream);
  }
  return chorus::Work();
}

}  // namespace

Stress::Stress(chorus::Communicator& world, const StressConfig& cfg) : world_(world), cfg_(cfg) {
  sub_of_.fill(-1);
  sizes_.fill(world.size());
  // Resolve "rest" and check that the listed sizes tile the world.
  int product = 1, rest = -1;
  for (std::size_t i = 0; i < cfg.groups.size(); ++i) {
    if (cfg.groups[i].size == 0) rest = static_cast<int>(i);
    else product *= cfg.groups[i].size;
  }
  std::vector<int> sizes;
  for (const GroupSpec& g : cfg.groups) sizes.push_back(g.size);
  if (rest >= 0) {
    if (world.size() % product != 0)
      throw std::invalid_argument("--groups: " + std::to_string(world.size()) +
                                  " ranks are not a multiple of " + std::to_string(product));
    sizes[rest] = world.size() / product;
    product = world.size();
  }
  if (!cfg.groups.empty() && product != world.size())
    throw std::invalid_argument("--groups: the sizes multiply to " + std::to_string(product) +
                                ", not the " + std::to_string(world.size()) + " ranks");
  // Mixed-radix coordinates, first listed dimension fastest; a dimension's group is the
  // ranks that share every other coordinate.
  int stride = 1;
  for (std::size_t i = 0; i < cfg.groups.size(); ++i) {
    const int coord = (world.rank() / stride) % sizes[i];
    const int color = world.rank() - coord * stride;
    std::optional<chorus::Communicator> sub = world.split(color, coord);
    if (!sub) throw std::logic_error("split returned no communicator for a member");
    sub_of_[cfg.groups[i].dim] = static_cast<int>(subs_.size());
    sizes_[cfg.groups[i].dim] = sizes[i];
    subs_.push_back(std::move(*sub));
    stride *= sizes[i];
  }
  if (!cfg.serial)
    for (int d = 0; d < kNumDims; ++d) streams_[d] = comm_of(d).create_stream(kDimNames[d]);
}

chorus::Communicator& Stress::comm_of(int dim) {
  return sub_of_[dim] < 0 ? world_ : subs_[sub_of_[dim]];
}

std::string Stress::describe() const {
  std::string out;
  for (int d = 0; d < kNumDims; ++d) {
    if (!out.empty()) out += ", ";
    out += std::string(kDimNames[d]) + "=" + std::to_string(sizes_[d]) +
           (sub_of_[d] < 0 ? " (world)" : " (group)");
  }
  return out;
}

std::string Stress::stats_text() const {
  std::string out = "# statistics of rank " + std::to_string(world_.rank()) + ", world:\n" +
                    world_.stats_text();
  for (std::size_t i = 0; i < subs_.size(); ++i) {
    std::string dims;
    for (int d = 0; d < kNumDims; ++d)
      if (sub_of_[d] == static_cast<int>(i)) dims += std::string(dims.empty() ? "" : ",") + kDimNames[d];
    out += "# sub-communicator " + dims + ":\n" + subs_[i].stats_text();
  }
  return out;
}

std::vector<OpOutcome> Stress::run_step(std::int64_t step, bool desync) {
  std::vector<OpSpec> ops = plan_step(cfg_, step, sizes_);
  if (desync && !ops.empty())
    ops[0].kind = ops[0].kind == Kind::kAllReduce ? Kind::kAllGather : Kind::kAllReduce;
  if (send_.size() < ops.size()) {
    send_.resize(ops.size());
    recv_.resize(ops.size());
  }
  std::vector<OpOutcome> out(ops.size());
  std::vector<chorus::Work> works(ops.size());
  std::vector<Clock::time_point> begin(ops.size());
  // Completion times, written by the completion callbacks (shared: a callback may run
  // after this function has left on an error).
  struct Completions {
    explicit Completions(std::size_t n) : end(n) {}
    std::vector<std::atomic<std::int64_t>> end;
    std::atomic<std::size_t> finished{0};
  };
  auto completions = std::make_shared<Completions>(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {  // inputs first: the step times only communication
    const OpSpec& op = ops[i];
    chorus::Communicator& comm = comm_of(op.dim);
    const BufferCounts counts = buffer_counts(op, comm.size());
    send_[i].resize(counts.send * chorus::dtype_size(op.dtype));
    fill_send(op, {step, static_cast<int>(i)}, comm.rank(), comm.size(), send_[i].data());
  }
  const Clock::time_point step_begin = Clock::now();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const OpSpec& op = ops[i];
    chorus::Communicator& comm = comm_of(op.dim);
    const int n = comm.size();
    const BufferCounts counts = buffer_counts(op, n);
    const std::size_t esize = chorus::dtype_size(op.dtype);
    recv_[i].assign(counts.recv * esize, 0);
    out[i] = {label_of(cfg_, op), op.kind, n, op_bytes(op, n), 0.0, std::nullopt};
    begin[i] = Clock::now();
    works[i] = issue(comm, op, send_[i].data(), recv_[i].data(),
                     cfg_.serial ? nullptr : &streams_[op.dim]);
    works[i].on_complete([completions, i](const chorus::Work&) {
      completions->end[i].store(Clock::now().time_since_epoch().count(),
                                std::memory_order_relaxed);
      completions->finished.fetch_add(1, std::memory_order_release);
    });
  }
  // Wait for every operation, even after one failed: the others still use the buffers.
  std::optional<chorus::Error> first_error;
  for (chorus::Work& w : works) {
    try {
      w.wait();
    } catch (const chorus::Error& e) {
      if (!first_error) first_error = e;
    }
  }
  if (first_error) throw *first_error;
  // Callbacks run right after completion; wait() may return a moment before them.
  while (completions->finished.load(std::memory_order_acquire) < ops.size())
    std::this_thread::yield();
  Clock::time_point step_end = step_begin;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const OpSpec& op = ops[i];
    chorus::Communicator& comm = comm_of(op.dim);
    const Clock::time_point done{
        Clock::duration(completions->end[i].load(std::memory_order_relaxed))};
    out[i].seconds = std::chrono::duration<double>(done - begin[i]).count();
    step_end = std::max(step_end, done);
    if (auto bad = check_recv(op, {step, static_cast<int>(i)}, comm.rank(), comm.size(),
                              recv_[i].data())) {
      char text[160];
      std::snprintf(text, sizeof(text), "first wrong index %zu: expected %.17g, got %.17g",
                    bad->index, bad->expected, bad->got);
      out[i].wrong = text;
    }
  }
  last_step_seconds_ = std::chrono::duration<double>(step_end - step_begin).count();
  return out;
}

}  // namespace chorus_stress
