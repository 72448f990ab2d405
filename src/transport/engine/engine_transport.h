// The Transport face of an engine: argument checks, ops wrapped in Requests, waits handed
// to the engine. A medium's transport derives from it for its name and extras (windows,
// progress words).
#pragma once
#include <memory>

#include "transport/engine/engine.h"
#include "transport/transport.h"

namespace chorus::engine {

class EngineRequest final : public transport::Request {
 public:
  explicit EngineRequest(std::shared_ptr<Engine> engine) : engine_(std::move(engine)) {}
  ~EngineRequest() override { engine_->cancel(&op_); }
  bool done() const override {
    return op_.done.load(std::memory_order_acquire) || engine_->aborted();
  }
  Status status() const override {
    if (op_.done.load(std::memory_order_acquire)) return op_.status;
    if (engine_->aborted()) return engine_->abort_status();
    return Status::ok();
  }
  Op* op() { return &op_; }
  const Engine* engine() const { return engine_.get(); }

 private:
  std::shared_ptr<Engine> engine_;  // keeps the engine alive for cancel after ~Transport
  Op op_;
};

class EngineTransport : public transport::Transport {
 public:
  explicit EngineTransport(std::shared_ptr<Engine> engine) : engine_(std::move(engine)) {}
  ~EngineTransport() override { engine_->close(); }

  int rank() const override { return engine_->rank(); }
  int size() const override { return engine_->size(); }
  Result<transport::RequestPtr> post_send(int peer, transport::Tag tag, const void* data,
                                          std::size_t bytes) override;
  Result<transport::RequestPtr> post_recv(int peer, transport::Tag tag, void* data,
                                          std::size_t bytes) override;
  Status wait(std::span<transport::Request* const> reqs, Deadline deadline) override;
  Result<int> probe(std::span<const transport::ProbeTarget> targets, Deadline deadline) override;
  void abort(const Status& reason) override { engine_->abort(reason); }
  void poke() override { engine_->poke(); }
  bool idle() const override { return engine_->idle(); }
  Status disagreement(const transport::Tag& tag) override { return engine_->disagreement(tag); }
  Status failure() const override {
    return engine_->aborted() ? engine_->abort_status() : Status::ok();
  }
  Status failure_for(std::uint64_t seq) const override { return engine_->abort_for(seq); }
  int event_fd() const override { return engine_->event_fd(); }
  void arm_events(bool on) override { engine_->arm_events(on); }
  bool block(Deadline deadline, int also) override { return engine_->block(deadline, also); }

 private:
  Result<transport::RequestPtr> post(Op::Kind kind, const char* what, int peer,
                                     transport::Tag tag, const void* data, std::size_t bytes);
  std::shared_ptr<Engine> engine_;
};

}  // namespace chorus::engine
