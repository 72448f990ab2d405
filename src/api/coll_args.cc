// Argument checks of the public collectives, turned into core's CollArgs.
#include "api/coll_args.h"

#include "api/arg_check.h"
#include "api/error.h"
#include "util/strings.h"

namespace chorus::api {

namespace {

// Common checks: dtype, count (times `per_count` elements in the largest buffer).
void check_common(DataType dtype, std::size_t count, std::size_t per_count) {
  throw_if_error(check_dtype(dtype));
  throw_if_error(check_count("count", count, dtype, per_count));
}

op::CollArgs make_args(const void* send, void* recv, std::size_t count, DataType dtype,
                         ReduceOp op = ReduceOp::kSum, int root = 0) {
  op::CollArgs a;
  a.send = send;
  a.recv = recv;
  a.count = count;
  a.dtype = dtype;
  a.op = op;
  a.root = root;
  return a;
}

std::size_t per_rank(int size) { return static_cast<std::size_t>(size); }

}  // namespace

op::CollArgs all_reduce_args(const void* send, void* recv, std::size_t count, DataType dtype,
                               ReduceOp op) {
  check_common(dtype, count, 1);
  throw_if_error(check_op(op));
  throw_if_error(check_buffer("send", send, count));
  throw_if_error(check_buffer("recv", recv, count));
  return make_args(send, recv, count, dtype, op);
}

op::CollArgs reduce_args(int rank, int size, const void* send, void* recv, std::size_t count,
                           DataType dtype, ReduceOp op, int root) {
  check_common(dtype, count, 1);
  throw_if_error(check_op(op));
  throw_if_error(check_rank("root", root, size));
  throw_if_error(check_buffer("send", send, count));
  if (rank == root) throw_if_error(check_buffer("recv", recv, count));
  return make_args(send, recv, count, dtype, op, root);
}

op::CollArgs broadcast_args(int rank, int size, const void* send, void* recv,
                              std::size_t count, DataType dtype, int root) {
  check_common(dtype, count, 1);
  throw_if_error(check_rank("root", root, size));
  if (rank == root) throw_if_error(check_buffer("send", send, count));
  throw_if_error(check_buffer("recv", recv, count));
  return make_args(send, recv, count, dtype, ReduceOp::kSum, root);
}

op::CollArgs all_gather_args(int size, const void* send, void* recv, std::size_t count,
                               DataType dtype) {
  check_common(dtype, count, per_rank(size));
  throw_if_error(check_buffer("send", send, count));
  throw_if_error(check_buffer("recv", recv, count));
  return make_args(send, recv, count, dtype);
}

op::CollArgs reduce_scatter_args(int size, const void* send, void* recv, std::size_t count,
                                   DataType dtype, ReduceOp op) {
  check_common(dtype, count, per_rank(size));
  throw_if_error(check_op(op));
  throw_if_error(check_buffer("send", send, count));
  throw_if_error(check_buffer("recv", recv, count));
  return make_args(send, recv, count, dtype, op);
}

op::CollArgs all_to_all_args(int size, const void* send, void* recv, std::size_t count,
                               DataType dtype) {
  check_common(dtype, count, per_rank(size));
  throw_if_error(check_buffer("send", send, count));
  throw_if_error(check_buffer("recv", recv, count));
  return make_args(send, recv, count, dtype);
}

op::CollArgs all_to_all_v_args(int size, const void* send,
                                 std::span<const std::size_t> send_counts,
                                 std::span<const std::size_t> send_displs, void* recv,
                                 std::span<const std::size_t> recv_counts,
                                 std::span<const std::size_t> recv_displs, DataType dtype) {
  throw_if_error(check_dtype(dtype));
  std::size_t send_extent = 0, recv_extent = 0;
  throw_if_error(check_v_spans("send_counts", send_counts, "send_displs", send_displs, size,
                               dtype, &send_extent));
  throw_if_error(check_v_spans("recv_counts", recv_counts, "recv_displs", recv_displs, size,
                               dtype, &recv_extent));
  throw_if_error(check_buffer("send", send, send_extent));
  throw_if_error(check_buffer("recv", recv, recv_extent));
  op::CollArgs a = make_args(send, recv, 0, dtype);
  a.send_counts = send_counts.data();
  a.send_displs = send_displs.data();
  a.recv_counts = recv_counts.data();
  a.recv_displs = recv_displs.data();
  return a;
}

op::CollArgs gather_args(int rank, int size, const void* send, void* recv, std::size_t count,
                           DataType dtype, int root) {
  check_common(dtype, count, per_rank(size));
  throw_if_error(check_rank("root", root, size));
  throw_if_error(check_buffer("send", send, count));
  if (rank == root) throw_if_error(check_buffer("recv", recv, count));
  return make_args(send, recv, count, dtype, ReduceOp::kSum, root);
}

op::CollArgs scatter_args(int rank, int size, const void* send, void* recv, std::size_t count,
                            DataType dtype, int root) {
  check_common(dtype, count, per_rank(size));
  throw_if_error(check_rank("root", root, size));
  if (rank == root) throw_if_error(check_buffer("send", send, count));
  throw_if_error(check_buffer("recv", recv, count));
  return make_args(send, recv, count, dtype, ReduceOp::kSum, root);
}

std::size_t p2p_bytes(bool sending, int rank, int size, const void* buf, std::size_t count,
                      DataType dtype, int peer) {
  check_common(dtype, count, 1);
  throw_if_error(check_rank("peer", peer, size));
  if (peer == rank)
    throw Error(ErrorCode::kInvalidArgument,
                str_printf("peer=%d is this rank (%s)", peer,
                           sending ? "send to self" : "recv from self"));
  throw_if_error(check_buffer("buf", buf, count));
  return count * dtype_size(dtype);
}

std::size_t any_source_bytes(const void* buf, std::size_t count, DataType dtype) {
  check_common(dtype, count, 1);
  throw_if_error(check_buffer("buf", buf, count));
  return count * dtype_size(dtype);
}

}  // namespace chorus::api
