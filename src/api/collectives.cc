// The public collectives and send/recv, blocking and _async: one argument check each
// (api/coll_args.h), then core runs the operation inline or queues it on a stream.
#include "api/coll_args.h"
#include "api/error.h"
#include "api/stream_check.h"
#include "api/work_access.h"
#include "chorus/communicator.h"
#include "core/comm.h"

namespace chorus {

using op::CollArgs;
using op::CollKind;
using api::throw_if_error;

namespace {

Work run_async(core::Comm& impl, CollKind kind, const CollArgs& args, const Stream& stream) {
  return api::WorkAccess::make(
      api::value_or_throw(impl.run_async(kind, args, api::stream_id(impl, stream))));
}

Work p2p_async(core::Comm& impl, bool sending, const void* buf, std::size_t bytes, int peer,
               int tag, const Stream& stream) {
  const int id = api::stream_id(impl, stream);
  // The transport only reads a send buffer; one path serves both directions.
  return api::WorkAccess::make(api::value_or_throw(
      impl.p2p_async(sending, const_cast<void*>(buf), bytes, peer, id, tag)));
}

int checked_tag(int tag) {
  if (tag < 0)
    throw Error(ErrorCode::kInvalidArgument,
                "tag must be >= 0 (each tag of a pair of ranks is its own message sequence), "
                "got " + std::to_string(tag));
  return tag;
}

}  // namespace

void Communicator::all_reduce(const void* send, void* recv, std::size_t count, DataType dtype,
                              ReduceOp op) {
  throw_if_error(impl().run(CollKind::kAllReduce, api::all_reduce_args(send, recv, count, dtype, op)));
}

Work Communicator::all_reduce_async(const void* send, void* recv, std::size_t count,
                                    DataType dtype, ReduceOp op, const Stream& stream) {
  return run_async(impl(), CollKind::kAllReduce, api::all_reduce_args(send, recv, count, dtype, op),
                   stream);
}

void Communicator::reduce(const void* send, void* recv, std::size_t count, DataType dtype,
                          ReduceOp op, int root) {
  throw_if_error(impl().run(CollKind::kReduce, api::reduce_args(rank(), size(), send, recv, count,
                                                                dtype, op, root)));
}

Work Communicator::reduce_async(const void* send, void* recv, std::size_t count, DataType dtype,
                                ReduceOp op, int root, const Stream& stream) {
  return run_async(impl(), CollKind::kReduce,
                   api::reduce_args(rank(), size(), send, recv, count, dtype, op, root), stream);
}

void Communicator::broadcast(const void* send, void* recv, std::size_t count, DataType dtype,
                             int root) {
  throw_if_error(impl().run(CollKind::kBroadcast, api::broadcast_args(rank(), size(), send, recv,
                                                                      count, dtype, root)));
}

Work Communicator::broadcast_async(const void* send, void* recv, std::size_t count,
                                   DataType dtype, int root, const Stream& stream) {
  return run_async(impl(), CollKind::kBroadcast,
                   api::broadcast_args(rank(), size(), send, recv, count, dtype, root), stream);
}

void Communicator::all_gather(const void* send, void* recv, std::size_t count, DataType dtype) {
  throw_if_error(impl().run(CollKind::kAllGather, api::all_gather_args(size(), send, recv, count, dtype)));
}

Work Communicator::all_gather_async(const void* send, void* recv, std::size_t count,
                                    DataType dtype, const Stream& stream) {
  return run_async(impl(), CollKind::kAllGather,
                   api::all_gather_args(size(), send, recv, count, dtype), stream);
}

void Communicator::reduce_scatter(const void* send, void* recv, std::size_t count, DataType dtype,
                                  ReduceOp op) {
  throw_if_error(impl().run(CollKind::kReduceScatter,
                            api::reduce_scatter_args(size(), send, recv, count, dtype, op)));
}

Work Communicator::reduce_scatter_async(const void* send, void* recv, std::size_t count,
                                        DataType dtype, ReduceOp op, const Stream& stream) {
  return run_async(impl(), CollKind::kReduceScatter,
                   api::reduce_scatter_args(size(), send, recv, count, dtype, op), stream);
}

void Communicator::all_to_all(const void* send, void* recv, std::size_t count, DataType dtype) {
  throw_if_error(impl().run(CollKind::kAllToAll, api::all_to_all_args(size(), send, recv, count, dtype)));
}

Work Communicator::all_to_all_async(const void* send, void* recv, std::size_t count,
                                    DataType dtype, const Stream& stream) {
  return run_async(impl(), CollKind::kAllToAll,
                   api::all_to_all_args(size(), send, recv, count, dtype), stream);
}

void Communicator::all_to_all_v(const void* send, std::span<const std::size_t> send_counts,
                                std::span<const std::size_t> send_displs, void* recv,
                                std::span<const std::size_t> recv_counts,
                                std::span<const std::size_t> recv_displs, DataType dtype) {
  throw_if_error(impl().run(CollKind::kAllToAllV,
                            api::all_to_all_v_args(size(), send, send_counts, send_displs, recv,
                                                   recv_counts, recv_displs, dtype)));
}

Work Communicator::all_to_all_v_async(const void* send, std::span<const std::size_t> send_counts,
                                      std::span<const std::size_t> send_displs, void* recv,
                                      std::span<const std::size_t> recv_counts,
                                      std::span<const std::size_t> recv_displs, DataType dtype,
                                      const Stream& stream) {
  return run_async(impl(), CollKind::kAllToAllV,
                   api::all_to_all_v_args(size(), send, send_counts, send_displs, recv,
                                          recv_counts, recv_displs, dtype),
                   stream);
}

void Communicator::gather(const void* send, void* recv, std::size_t count, DataType dtype, int root) {
  throw_if_error(impl().run(CollKind::kGather, api::gather_args(rank(), size(), send, recv, count,
                                                                dtype, root)));
}

Work Communicator::gather_async(const void* send, void* recv, std::size_t count, DataType dtype,
                                int root, const Stream& stream) {
  return run_async(impl(), CollKind::kGather,
                   api::gather_args(rank(), size(), send, recv, count, dtype, root), stream);
}

void Communicator::scatter(const void* send, void* recv, std::size_t count, DataType dtype, int root) {
  throw_if_error(impl().run(CollKind::kScatter, api::scatter_args(rank(), size(), send, recv, count,
                                                                  dtype, root)));
}

Work Communicator::scatter_async(const void* send, void* recv, std::size_t count, DataType dtype,
                                 int root, const Stream& stream) {
  return run_async(impl(), CollKind::kScatter,
                   api::scatter_args(rank(), size(), send, recv, count, dtype, root), stream);
}

void Communicator::send(const void* buf, std::size_t count, DataType dtype, int peer) {
  send(buf, count, dtype, peer, 0);
}

void Communicator::send(const void* buf, std::size_t count, DataType dtype, int peer, int tag) {
  const std::size_t bytes = api::p2p_bytes(true, rank(), size(), buf, count, dtype, peer);
  throw_if_error(impl().send(buf, bytes, peer, checked_tag(tag)));
}

Work Communicator::send_async(const void* buf, std::size_t count, DataType dtype, int peer,
                              const Stream& stream) {
  return send_async(buf, count, dtype, peer, 0, stream);
}

Work Communicator::send_async(const void* buf, std::size_t count, DataType dtype, int peer,
                              int tag, const Stream& stream) {
  const std::size_t bytes = api::p2p_bytes(true, rank(), size(), buf, count, dtype, peer);
  return p2p_async(impl(), true, buf, bytes, peer, checked_tag(tag), stream);
}

void Communicator::recv(void* buf, std::size_t count, DataType dtype, int peer) {
  recv(buf, count, dtype, peer, 0);
}

void Communicator::recv(void* buf, std::size_t count, DataType dtype, int peer, int tag) {
  const std::size_t bytes = api::p2p_bytes(false, rank(), size(), buf, count, dtype, peer);
  throw_if_error(impl().recv(buf, bytes, peer, checked_tag(tag)));
}

Work Communicator::recv_async(void* buf, std::size_t count, DataType dtype, int peer,
                              const Stream& stream) {
  return recv_async(buf, count, dtype, peer, 0, stream);
}

Work Communicator::recv_async(void* buf, std::size_t count, DataType dtype, int peer, int tag,
                              const Stream& stream) {
  const std::size_t bytes = api::p2p_bytes(false, rank(), size(), buf, count, dtype, peer);
  return p2p_async(impl(), false, buf, bytes, peer, checked_tag(tag), stream);
}

int Communicator::recv_any(void* buf, std::size_t count, DataType dtype, int tag) {
  const std::size_t bytes = api::any_source_bytes(buf, count, dtype);
  return api::value_or_throw(impl().recv_any(buf, bytes, checked_tag(tag)));
}

Work Communicator::recv_any_async(void* buf, std::size_t count, DataType dtype,
                                  const Stream& stream) {
  return recv_any_async(buf, count, dtype, 0, stream);
}

Work Communicator::recv_any_async(void* buf, std::size_t count, DataType dtype, int tag,
                                  const Stream& stream) {
  const std::size_t bytes = api::any_source_bytes(buf, count, dtype);
  const int id = api::stream_id(impl(), stream);
  return api::WorkAccess::make(
      api::value_or_throw(impl().recv_any_async(buf, bytes, checked_tag(tag), id)));
}

void Communicator::barrier() { throw_if_error(impl().run(CollKind::kBarrier, CollArgs{})); }

Work Communicator::barrier_async(const Stream& stream) {
  return run_async(impl(), CollKind::kBarrier, CollArgs{}, stream);
}

}  // namespace chorus
