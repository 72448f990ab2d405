// The TCP Transport: the engine's transport (engine::EngineTransport) with TCP's name and
// progress words, built from a freshly formed mesh (create_tcp_transport).
#include "transport/tcp/tcp_transport.h"

#include <memory>

#include "diag/log.h"
#include "transport/engine/engine_transport.h"
#include "transport/tcp/engine.h"
#include "util/strings.h"

namespace chorus::tcp {
namespace {

class TcpTransport final : public engine::EngineTransport {
 public:
  explicit TcpTransport(std::shared_ptr<Engine> engine)
      : EngineTransport(engine), engine_(std::move(engine)) {}
  std::string name() const override { return "tcp"; }
  void set_progress(std::uint64_t last_done_seq) override { engine_->set_progress(last_done_seq); }
  std::int64_t peer_progress(int peer) const override {
    return peer >= 0 && peer < size() && peer != rank() ? engine_->peer_progress(peer) : -1;
  }

 private:
  std::shared_ptr<Engine> engine_;
};

}  // namespace

Result<std::unique_ptr<transport::Transport>> create_tcp_transport(const TcpOptions& opts,
                                                                   const AddressExchange& exchange) {
  CHORUS_ASSIGN_OR_RETURN(Mesh mesh, build_mesh(opts, exchange));
  CHORUS_LOG(INFO, Net, "rank %d: TCP mesh of %d ranks formed", opts.rank, opts.size);
  auto engine = std::make_shared<Engine>(opts, std::move(mesh));
  return std::unique_ptr<transport::Transport>(std::make_unique<TcpTransport>(std::move(engine)));
}

}  // namespace chorus::tcp
