// chorus::Communicator: checks arguments, hands the op to core, turns Status into Error.
#include "chorus/communicator.h"

#include "api/arg_check.h"
#include "api/error.h"
#include "api/store_adapter.h"
#include "core/comm_config.h"
#include "core/comm_impl.h"
#include "core/init_env.h"
#include "util/strings.h"

namespace chorus {

using algo::CollArgs;
using algo::CollKind;
using api::throw_if_error;

Communicator::Communicator(std::unique_ptr<core::CommImpl> impl) : impl_(std::move(impl)) {}
Communicator::Communicator(Communicator&&) noexcept = default;
Communicator& Communicator::operator=(Communicator&&) noexcept = default;
Communicator::~Communicator() = default;

Communicator Communicator::init_from_env(const Options& options) {
  return Communicator(api::value_or_throw(core::init_from_env(options, config::Environment::process())));
}

Communicator Communicator::init(int rank, int size, std::shared_ptr<Store> store,
                                const Options& options) {
  if (!store) throw Error(ErrorCode::kInvalidArgument, "store must not be null");
  auto cfg = api::value_or_throw(core::resolve_process_config(options));
  return Communicator(
      api::value_or_throw(core::CommImpl::create(rank, size, api::to_internal(std::move(store)), cfg)));
}

core::CommImpl& Communicator::impl() const {
  if (!impl_) throw Error(ErrorCode::kInvalidArgument, "communicator was moved from");
  return *impl_;
}

int Communicator::rank() const { return impl().rank(); }
int Communicator::size() const { return impl().size(); }

void Communicator::check_span_sizes(std::size_t expected, std::size_t actual, std::size_t factor,
                                    const char* name) {
  if (actual != expected * factor)
    throw Error(ErrorCode::kInvalidArgument,
                str_printf("%s has %zu elements, expected %zu", name, actual, expected * factor));
}

namespace {

// Common checks: dtype, count (times `per_count` elements in the largest buffer).
void check_common(DataType dtype, std::size_t count, std::size_t per_count) {
  throw_if_error(api::check_dtype(dtype));
  throw_if_error(api::check_count("count", count, dtype, per_count));
}

CollArgs make_args(const void* send, void* recv, std::size_t count, DataType dtype,
                   ReduceOp op = ReduceOp::kSum, int root = 0) {
  CollArgs a;
  a.send = send;
  a.recv = recv;
  a.count = count;
  a.dtype = dtype;
  a.op = op;
  a.root = root;
  return a;
}

}  // namespace

void Communicator::all_reduce(const void* send, void* recv, std::size_t count, DataType dtype,
                              ReduceOp op) {
  check_common(dtype, count, 1);
  throw_if_error(api::check_op(op));
  throw_if_error(api::check_buffer("send", send, count));
  throw_if_error(api::check_buffer("recv", recv, count));
  throw_if_error(impl().run(CollKind::kAllReduce, make_args(send, recv, count, dtype, op)));
}

void Communicator::reduce(const void* send, void* recv, std::size_t count, DataType dtype,
                          ReduceOp op, int root) {
  check_common(dtype, count, 1);
  throw_if_error(api::check_op(op));
  throw_if_error(api::check_rank("root", root, size()));
  throw_if_error(api::check_buffer("send", send, count));
  if (rank() == root) throw_if_error(api::check_buffer("recv", recv, count));
  throw_if_error(impl().run(CollKind::kReduce, make_args(send, recv, count, dtype, op, root)));
}

void Communicator::broadcast(const void* send, void* recv, std::size_t count, DataType dtype,
                             int root) {
  check_common(dtype, count, 1);
  throw_if_error(api::check_rank("root", root, size()));
  if (rank() == root) throw_if_error(api::check_buffer("send", send, count));
  throw_if_error(api::check_buffer("recv", recv, count));
  throw_if_error(
      impl().run(CollKind::kBroadcast, make_args(send, recv, count, dtype, ReduceOp::kSum, root)));
}

void Communicator::all_gather(const void* send, void* recv, std::size_t count, DataType dtype) {
  check_common(dtype, count, static_cast<std::size_t>(size()));
  throw_if_error(api::check_buffer("send", send, count));
  throw_if_error(api::check_buffer("recv", recv, count));
  throw_if_error(impl().run(CollKind::kAllGather, make_args(send, recv, count, dtype)));
}

void Communicator::reduce_scatter(const void* send, void* recv, std::size_t count, DataType dtype,
                                  ReduceOp op) {
  check_common(dtype, count, static_cast<std::size_t>(size()));
  throw_if_error(api::check_op(op));
  throw_if_error(api::check_buffer("send", send, count));
  throw_if_error(api::check_buffer("recv", recv, count));
  throw_if_error(impl().run(CollKind::kReduceScatter, make_args(send, recv, count, dtype, op)));
}

void Communicator::all_to_all(const void* send, void* recv, std::size_t count, DataType dtype) {
  check_common(dtype, count, static_cast<std::size_t>(size()));
  throw_if_error(api::check_buffer("send", send, count));
  throw_if_error(api::check_buffer("recv", recv, count));
  throw_if_error(impl().run(CollKind::kAllToAll, make_args(send, recv, count, dtype)));
}

void Communicator::all_to_all_v(const void* send, std::span<const std::size_t> send_counts,
                                std::span<const std::size_t> send_displs, void* recv,
                                std::span<const std::size_t> recv_counts,
                                std::span<const std::size_t> recv_displs, DataType dtype) {
  throw_if_error(api::check_dtype(dtype));
  std::size_t send_extent = 0, recv_extent = 0;
  throw_if_error(api::check_v_spans("send_counts", send_counts, "send_displs", send_displs, size(),
                                    dtype, &send_extent));
  throw_if_error(api::check_v_spans("recv_counts", recv_counts, "recv_displs", recv_displs, size(),
                                    dtype, &recv_extent));
  throw_if_error(api::check_buffer("send", send, send_extent));
  throw_if_error(api::check_buffer("recv", recv, recv_extent));
  CollArgs a = make_args(send, recv, 0, dtype);
  a.send_counts = send_counts.data();
  a.send_displs = send_displs.data();
  a.recv_counts = recv_counts.data();
  a.recv_displs = recv_displs.data();
  throw_if_error(impl().run(CollKind::kAllToAllV, a));
}

void Communicator::gather(const void* send, void* recv, std::size_t count, DataType dtype, int root) {
  check_common(dtype, count, static_cast<std::size_t>(size()));
  throw_if_error(api::check_rank("root", root, size()));
  throw_if_error(api::check_buffer("send", send, count));
  if (rank() == root) throw_if_error(api::check_buffer("recv", recv, count));
  throw_if_error(
      impl().run(CollKind::kGather, make_args(send, recv, count, dtype, ReduceOp::kSum, root)));
}

void Communicator::scatter(const void* send, void* recv, std::size_t count, DataType dtype, int root) {
  check_common(dtype, count, static_cast<std::size_t>(size()));
  throw_if_error(api::check_rank("root", root, size()));
  if (rank() == root) throw_if_error(api::check_buffer("send", send, count));
  throw_if_error(api::check_buffer("recv", recv, count));
  throw_if_error(
      impl().run(CollKind::kScatter, make_args(send, recv, count, dtype, ReduceOp::kSum, root)));
}

void Communicator::send(const void* buf, std::size_t count, DataType dtype, int peer) {
  check_common(dtype, count, 1);
  throw_if_error(api::check_rank("peer", peer, size()));
  if (peer == rank())
    throw Error(ErrorCode::kInvalidArgument, str_printf("peer=%d is this rank (send to self)", peer));
  throw_if_error(api::check_buffer("buf", buf, count));
  throw_if_error(impl().send(buf, count * dtype_size(dtype), peer));
}

void Communicator::recv(void* buf, std::size_t count, DataType dtype, int peer) {
  check_common(dtype, count, 1);
  throw_if_error(api::check_rank("peer", peer, size()));
  if (peer == rank())
    throw Error(ErrorCode::kInvalidArgument, str_printf("peer=%d is this rank (recv from self)", peer));
  throw_if_error(api::check_buffer("buf", buf, count));
  throw_if_error(impl().recv(buf, count * dtype_size(dtype), peer));
}

void Communicator::barrier() { throw_if_error(impl().run(CollKind::kBarrier, CollArgs{})); }

bool Communicator::agree(bool flag) { return api::value_or_throw(impl().agree(flag)); }

void Communicator::abort() noexcept {
  if (impl_) impl_->abort();
}

void Communicator::abort_all() noexcept { core::CommImpl::abort_all(); }

static_assert(Communicator::kNoColor == core::CommImpl::kNoColor);

std::optional<Communicator> Communicator::split(int color, int key) {
  auto sub = api::value_or_throw(impl().split(color, key));
  if (!sub) return std::nullopt;
  return Communicator(std::move(sub));
}

std::optional<Communicator> Communicator::new_group(std::span<const int> ranks) {
  auto sub = api::value_or_throw(impl().new_group(std::vector<int>(ranks.begin(), ranks.end())));
  if (!sub) return std::nullopt;
  return Communicator(std::move(sub));
}

Communicator Communicator::shrink() { return Communicator(api::value_or_throw(impl().shrink())); }

HealthReport Communicator::health_check(std::chrono::milliseconds timeout) {
  if (timeout.count() < 0)
    throw Error(ErrorCode::kInvalidArgument,
                str_printf("timeout must be >= 0 ms, got %lld", static_cast<long long>(timeout.count())));
  const auto h = impl().health_check(timeout);
  HealthReport r;
  r.ok = h.status.is_ok();
  r.code = h.status.code();
  r.message = h.status.message();
  r.ranks_responding = h.ranks_responding;
  r.elapsed = h.elapsed;
  return r;
}

void Communicator::set_timeout(std::chrono::milliseconds timeout) {
  if (timeout.count() < 0)
    throw Error(ErrorCode::kInvalidArgument,
                str_printf("timeout must be >= 0 ms, got %lld", static_cast<long long>(timeout.count())));
  impl().set_timeout(timeout);
}

std::chrono::milliseconds Communicator::timeout() const { return impl().timeout(); }

std::string Communicator::flight_record() const { return impl().flight_record("api"); }

std::string Communicator::flight_record_json() const {
  return impl().flight_record_json("api");
}

}  // namespace chorus
