// The checked arguments of every public collective and send/recv, shared by the blocking
// calls and their _async twins: each builder throws chorus::Error(kInvalidArgument)
// naming the bad argument, else returns what core runs.
#pragma once
#include <cstddef>
#include <span>

#include "chorus/types.h"
#include "op/args.h"

namespace chorus::api {

// `rank` / `size` are the calling rank and the communicator size.
op::CollArgs all_reduce_args(const void* send, void* recv, std::size_t count, DataType dtype,
                               ReduceOp op);
op::CollArgs reduce_args(int rank, int size, const void* send, void* recv, std::size_t count,
                           DataType dtype, ReduceOp op, int root);
op::CollArgs broadcast_args(int rank, int size, const void* send, void* recv,
                              std::size_t count, DataType dtype, int root);
op::CollArgs all_gather_args(int size, const void* send, void* recv, std::size_t count,
                               DataType dtype);
op::CollArgs reduce_scatter_args(int size, const void* send, void* recv, std::size_t count,
                                   DataType dtype, ReduceOp op);
op::CollArgs all_to_all_args(int size, const void* send, void* recv, std::size_t count,
                               DataType dtype);
// The span pointers are stored as they are (an async call copies them in core).
op::CollArgs all_to_all_v_args(int size, const void* send,
                                 std::span<const std::size_t> send_counts,
                                 std::span<const std::size_t> send_displs, void* recv,
                                 std::span<const std::size_t> recv_counts,
                                 std::span<const std::size_t> recv_displs, DataType dtype);
op::CollArgs gather_args(int rank, int size, const void* send, void* recv, std::size_t count,
                           DataType dtype, int root);
op::CollArgs scatter_args(int rank, int size, const void* send, void* recv, std::size_t count,
                            DataType dtype, int root);
// send (`sending`) or recv of `count` elements with `peer`: checks, returns the bytes.
std::size_t p2p_bytes(bool sending, int rank, int size, const void* buf, std::size_t count,
                      DataType dtype, int peer);
// recv_any's checks (count, dtype, buffer; no peer): the byte count.
std::size_t any_source_bytes(const void* buf, std::size_t count, DataType dtype);

}  // namespace chorus::api
