// Blocking helpers over the Transport interface.
#include "transport/transport.h"

#include "util/strings.h"

namespace chorus::transport {

SharedWindows* Transport::group_windows(std::span<const int> members) {
  if (members.size() != static_cast<std::size_t>(size())) return nullptr;
  for (std::size_t i = 0; i < members.size(); ++i)
    if (members[i] != static_cast<int>(i)) return nullptr;
  return shared_windows();
}

Status SharedWindows::read_peer(int rank, const void*, void*, std::size_t) {
  return Status(ErrorCode::kInternal,
                str_printf("read_peer(rank %d): this transport offers no single-copy reads", rank));
}

Status SharedWindows::exchange(const void*, std::size_t bytes, const Tag&, Deadline) {
  return Status(ErrorCode::kInternal,
                str_printf("exchange(%zu bytes): this transport offers no mailboxes", bytes));
}

const void* SharedWindows::mailbox(int) const { return nullptr; }

Status SharedWindows::write_peer(int rank, const void*, void*, std::size_t) {
  return Status(ErrorCode::kInternal,
                str_printf("write_peer(rank %d): this transport offers no single-copy writes", rank));
}

Result<int> Transport::probe(std::span<const ProbeTarget> /*targets*/, Deadline /*deadline*/) {
  return Status(ErrorCode::kNotSupported,
                str_printf("receive from any source (probe) is not supported by the %s transport",
                           name().c_str()));
}

Status check_probe_targets(const char* what, std::span<const ProbeTarget> targets, int rank,
                           int size) {
  if (targets.empty()) return invalid_argument(str_printf("%s: no peer to receive from", what));
  for (const ProbeTarget& t : targets) {
    if (t.peer < 0 || t.peer >= size)
      return invalid_argument(str_printf("%s: peer %d is out of range [0, %d)", what, t.peer, size));
    if (t.peer == rank) return invalid_argument(str_printf("%s: peer %d is this rank", what, t.peer));
  }
  return Status::ok();
}

Status probe_timeout(int rank, std::span<const ProbeTarget> targets) {
  std::string peers;
  for (const ProbeTarget& t : targets) peers += (peers.empty() ? "" : ", ") + std::to_string(t.peer);
  const Tag& t = targets.front().tag;
  return Status(ErrorCode::kTimeout,
                str_printf("rank %d: deadline passed waiting for a message from any of peer "
                           "ranks %s (tag comm %u step %u): none of them sent one",
                           rank, peers.c_str(), t.comm, t.step),
                targets.size() == 1 ? targets.front().peer : -1);
}

Status check_post_args(const char* what, int peer, int rank, int size, const void* data,
                       std::size_t bytes) {
  if (peer < 0 || peer >= size)
    return invalid_argument(str_printf("%s: peer %d is out of range [0, %d)", what, peer, size));
  if (peer == rank) return invalid_argument(str_printf("%s: peer %d is this rank", what, peer));
  if (data == nullptr && bytes > 0)
    return invalid_argument(str_printf("%s: data is null for %zu bytes", what, bytes));
  return Status::ok();
}

Status overtaken_receive(int rank, const Tag& expected, int peer, const std::string& peer_address,
                         const Tag& later, const std::string& expected_desc,
                         const std::string& later_desc) {
  return Status(
      ErrorCode::kDesync,
      str_printf("rank %d expected %s seq %llu (step %u) from peer rank %d (%s), which moved on "
                 "to %s seq %llu without sending it: the ranks disagree about operation seq %llu "
                 "(different roots, or an operation skipped on one side)",
                 rank, expected_desc.c_str(), static_cast<unsigned long long>(expected.seq),
                 expected.step, peer, peer_address.c_str(), later_desc.c_str(),
                 static_cast<unsigned long long>(later.seq),
                 static_cast<unsigned long long>(expected.seq)),
      peer, static_cast<std::int64_t>(expected.seq));
}

Status foreign_message(int rank, int peer, const std::string& peer_address, const Tag& msg,
                       const std::string& mine_desc, const std::string& msg_desc) {
  const auto seq = static_cast<unsigned long long>(msg.seq);
  return Status(ErrorCode::kDesync,
                str_printf("rank %d runs %s seq %llu, but peer rank %d (%s) sent it a message of "
                           "%s seq %llu (tag comm %u step %u)",
                           rank, mine_desc.c_str(), seq, peer, peer_address.c_str(),
                           msg_desc.c_str(), seq, msg.comm, msg.step),
                peer, static_cast<std::int64_t>(msg.seq));
}

Status send(Transport& t, int peer, Tag tag, const void* data, std::size_t bytes, Deadline d) {
  CHORUS_ASSIGN_OR_RETURN(RequestPtr r, t.post_send(peer, tag, data, bytes));
  return wait_one(t, r.get(), d);
}

Status recv(Transport& t, int peer, Tag tag, void* data, std::size_t bytes, Deadline d) {
  CHORUS_ASSIGN_OR_RETURN(RequestPtr r, t.post_recv(peer, tag, data, bytes));
  return wait_one(t, r.get(), d);
}

Status send_recv(Transport& t, int to, Tag send_tag, const void* send_data, std::size_t send_bytes,
                 int from, Tag recv_tag, void* recv_data, std::size_t recv_bytes, Deadline d) {
  CHORUS_ASSIGN_OR_RETURN(RequestPtr r, t.post_recv(from, recv_tag, recv_data, recv_bytes));
  CHORUS_ASSIGN_OR_RETURN(RequestPtr s, t.post_send(to, send_tag, send_data, send_bytes));
  Request* reqs[2] = {r.get(), s.get()};
  return t.wait(std::span<Request* const>(reqs, 2), d);
}

}  // namespace chorus::transport
