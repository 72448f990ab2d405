// gloo_bench: the comparison harness's Gloo peer. Times gloo::allreduce, gloo::allgather,
// gloo::broadcast, gloo::alltoall (the options API PyTorch uses) and the in-place
// ReduceScatterHalvingDoubling on float32 buffers over Gloo's TCP transport on loopback,
// with chorus-bench's sizes, and checks every result exactly. Rank and world size come
// from CHORUS_RANK/CHORUS_WORLD_SIZE (chorus-run) or OMPI_COMM_WORLD_* (mpirun); the
// ranks meet through a gloo::rendezvous::FileStore in the empty directory --store DIR.
// GLOO_SOCKET_IFNAME (PyTorch's name for it) picks the interface to listen on instead of
// loopback: bench/hosts runs it across network namespaces.
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/math.h>
#include <gloo/reduce_scatter.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "peer_bench.h"

namespace {

using compare::Op;
using compare::Shape;
using ReduceFn = void (*)(void*, const void*, const void*, std::size_t);

class GlooPeer : public compare::Peer {
 public:
  GlooPeer(std::shared_ptr<gloo::Context> ctx, int root) : ctx_(std::move(ctx)), root_(root) {}
  const char* name() const override { return "gloo"; }
  int rank() const override { return ctx_->rank; }
  int size() const override { return ctx_->size; }

  // ReduceScatterHalvingDoubling registers its buffers once, at construction.
  void prepare(Op op, const Shape& s, float* send, float*) override {
    if (op != Op::kReduceScatter) return;
    std::vector<int> blocks(static_cast<std::size_t>(size()), static_cast<int>(s.count));
    reduce_scatter_ = std::make_unique<gloo::ReduceScatterHalvingDoubling<float>>(
        ctx_, std::vector<float*>{send}, static_cast<int>(s.elems), blocks);
  }

  void run(Op op, const Shape& s, float* send, float* recv) override;

  // The reduce-scatter works in place: this rank's block ends at the start of `send`.
  const float* result(Op op, const float* send, const float* recv) const override {
    return op == Op::kReduceScatter ? send : recv;
  }
  void barrier() override {
    gloo::BarrierOptions opts(ctx_);
    opts.setTag(next_tag());
    gloo::barrier(opts);
  }
  double max_over_ranks(double value) override {
    return reduce_one(value, static_cast<ReduceFn>(&gloo::max<double>));
  }
  std::int64_t sum_over_ranks(std::int64_t value) override {
    return reduce_one(value, static_cast<ReduceFn>(&gloo::sum<std::int64_t>));
  }

 private:
  template <typename T>
  T reduce_one(T value, ReduceFn fn) {
    T out = 0;
    gloo::AllreduceOptions opts(ctx_);
    opts.setInput(&value, 1);
    opts.setOutput(&out, 1);
    opts.setReduceFunction(fn);
    opts.setTag(next_tag());
    gloo::allreduce(opts);
    return out;
  }
  std::uint32_t next_tag() { return tag_++; }

  std::shared_ptr<gloo::Context> ctx_;
  int root_;
  std::uint32_t tag_ = 1;
  std::unique_ptr<gloo::ReduceScatterHalvingDoubling<float>> reduce_scatter_;
};

void GlooPeer::run(Op op, const Shape& s, float* send, float* recv) {
  std::size_t n = static_cast<std::size_t>(size());
  switch (op) {
    case Op::kAllReduce: {
      gloo::AllreduceOptions opts(ctx_);
      opts.setInput(send, s.count);
      opts.setOutput(recv, s.count);
      opts.setReduceFunction(static_cast<ReduceFn>(&gloo::sum<float>));
      opts.setTag(next_tag());
      return gloo::allreduce(opts);
    }
    case Op::kAllGather: {
      gloo::AllgatherOptions opts(ctx_);
      opts.setInput(send, s.count);
      opts.setOutput(recv, s.count * n);
      opts.setTag(next_tag());
      return gloo::allgather(opts);
    }
    case Op::kReduceScatter: return reduce_scatter_->run();
    case Op::kBroadcast: {
      gloo::BroadcastOptions opts(ctx_);
      if (rank() == root_) opts.setInput(send, s.count);
      opts.setOutput(recv, s.count);
      opts.setRoot(root_);
      opts.setTag(next_tag());
      return gloo::broadcast(opts);
    }
    case Op::kAllToAll: {
      gloo::AlltoallOptions opts(ctx_);
      opts.setInput(send, s.count * n);
      opts.setOutput(recv, s.count * n);
      opts.setTag(next_tag());
      return gloo::alltoall(opts);
    }
  }
}

// The first of `names` set in the environment, as an int; -1 when none is.
int env_int(std::initializer_list<const char*> names) {
  for (const char* name : names)
    if (const char* v = std::getenv(name)) return std::atoi(v);
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  compare::Config cfg;
  if (int rc = compare::parse_args(argc, argv, "gloo_bench", &cfg); rc >= 0) return rc;
  int rank = env_int({"CHORUS_RANK", "OMPI_COMM_WORLD_RANK", "RANK"});
  int size = env_int({"CHORUS_WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "WORLD_SIZE"});
  if (rank < 0 || size < 1 || cfg.store_path.empty()) {
    std::fprintf(stderr, "gloo_bench: needs a launcher (chorus-run or mpirun) and --store DIR\n");
    return 2;
  }
  try {
    gloo::transport::tcp::attr attr;
    if (const char* iface = std::getenv("GLOO_SOCKET_IFNAME"); iface != nullptr && *iface) {
      attr.iface = iface;
    } else {
      attr.hostname = "127.0.0.1";
    }
    auto device = gloo::transport::tcp::CreateDevice(attr);
    gloo::rendezvous::FileStore store(cfg.store_path);
    auto ctx = std::make_shared<gloo::rendezvous::Context>(rank, size);
    ctx->setTimeout(std::chrono::seconds(120));
    ctx->connectFullMesh(store, device);
    GlooPeer peer(ctx, cfg.root);
    return compare::run_bench(peer, cfg);
  } catch (const gloo::Exception& e) {
    std::fprintf(stderr, "gloo_bench: rank %d: %s\n", rank, e.what());
    return 1;
  }
}
