// ProcessGroupChorus's point-to-point operations: send/recv with tags (each tag of a pair
// is its own message sequence in Chorus), on the group's "p2p" stream, so they never wait
// behind the collectives of the default stream, and torch's coalescing
// (batch_isend_irecv) as a Chorus group.
#include "process_group.h"
#include "tensors.h"

namespace chorus::torch_backend {

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::send(std::vector<at::Tensor>& tensors,
                                                        int dst, int tag) {
  at::Tensor& t = single(tensors, "tensor");
  return launch(c10d::OpType::SEND, tensors, {}, [&] {
    return comm_->send_async(t.data_ptr(), count(t), to_dtype(t, "tensor"), dst, tag,
                             p2p_stream_);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::recv(std::vector<at::Tensor>& tensors,
                                                        int src, int tag) {
  at::Tensor& t = single(tensors, "tensor");
  return launch(c10d::OpType::RECV, tensors, {}, [&] {
    return comm_->recv_async(t.data_ptr(), count(t), to_dtype(t, "tensor"), src, tag,
                             p2p_stream_);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::recvAnysource(std::vector<at::Tensor>& tensors,
                                                                 int tag) {
  at::Tensor& t = single(tensors, "tensor");
  return launch(c10d::OpType::RECVANYSOURCE, tensors, {}, [&] {
    return comm_->recv_any_async(t.data_ptr(), count(t), to_dtype(t, "tensor"), tag, p2p_stream_);
  });
}

void ProcessGroupChorus::startCoalescing() {
  std::lock_guard<std::mutex> lock(issue_mu_);
  comm_->group_start();
}

void ProcessGroupChorus::endCoalescing(std::vector<c10::intrusive_ptr<c10d::Work>>& /*reqs*/) {
  // The Works torch collected are ours; they complete when the group ends.
  std::lock_guard<std::mutex> lock(issue_mu_);
  try {
    comm_->group_end();
  } catch (const chorus::Error& e) {
    TORCH_CHECK(false, "chorus backend: ", failure_text("coalesced operations", e.code(),
                                                        e.message()));
  }
}

}  // namespace chorus::torch_backend
