#include "transport/engine/engine_transport.h"

#include "util/strings.h"

namespace chorus::engine {

Result<transport::RequestPtr> EngineTransport::post(Op::Kind kind, const char* what, int peer,
                                                    transport::Tag tag, const void* data,
                                                    std::size_t bytes) {
  CHORUS_RETURN_IF_ERROR(transport::check_post_args(what, peer, rank(), size(), data, bytes));
  auto req = std::make_unique<EngineRequest>(engine_);
  Op* op = req->op();
  op->kind = kind;
  op->peer = peer;
  op->tag = tag;
  if (kind == Op::Kind::kSend) op->send_data = static_cast<const std::uint8_t*>(data);
  else op->recv_data = static_cast<std::uint8_t*>(const_cast<void*>(data));
  op->bytes = bytes;
  CHORUS_RETURN_IF_ERROR(engine_->post(op));
  return transport::RequestPtr(std::move(req));
}

Result<transport::RequestPtr> EngineTransport::post_send(int peer, transport::Tag tag,
                                                         const void* data, std::size_t bytes) {
  return post(Op::Kind::kSend, "post_send", peer, tag, data, bytes);
}

Result<transport::RequestPtr> EngineTransport::post_recv(int peer, transport::Tag tag, void* data,
                                                         std::size_t bytes) {
  return post(Op::Kind::kRecv, "post_recv", peer, tag, data, bytes);
}

Result<int> EngineTransport::probe(std::span<const transport::ProbeTarget> targets,
                                   Deadline deadline) {
  CHORUS_RETURN_IF_ERROR(transport::check_probe_targets("probe", targets, rank(), size()));
  return engine_->probe(targets, deadline);
}

Status EngineTransport::wait(std::span<transport::Request* const> reqs, Deadline deadline) {
  constexpr std::size_t kInline = 16;
  Op* inline_ops[kInline];
  std::unique_ptr<Op*[]> heap_ops;
  Op** ops = inline_ops;
  if (reqs.size() > kInline) {
    heap_ops = std::make_unique<Op*[]>(reqs.size());
    ops = heap_ops.get();
  }
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    ops[i] = nullptr;
    if (reqs[i] == nullptr) continue;
    auto* r = dynamic_cast<EngineRequest*>(reqs[i]);
    if (r == nullptr || r->engine() != engine_.get())
      return invalid_argument(
          str_printf("wait: request %zu does not belong to the %s transport", i, name().c_str()));
    ops[i] = r->op();
  }
  return engine_->wait(std::span<Op* const>(ops, reqs.size()), deadline);
}

}  // namespace chorus::engine
