// StreamQueue: the FIFO and worker thread of one stream.
#include "core/stream_queue.h"

namespace chorus::core {

namespace {

std::string make_label(int id, const std::string& name) {
  std::string out;
  for (char c : name) {
    const bool bad = static_cast<unsigned char>(c) <= 0x20 || c == '=' || c == '"' || c == 0x7f;
    out += bad ? '_' : c;
  }
  return out.empty() ? "stream" + std::to_string(id) : out;
}

}  // namespace

StreamQueue::StreamQueue(int id, std::string name)
    : id_(id), name_(std::move(name)), label_(make_label(id, name_)) {}

StreamQueue::~StreamQueue() { stop(); }

void StreamQueue::push(std::unique_ptr<StreamTask> task) {
  std::lock_guard<std::mutex> g(mu_);
  outstanding_.fetch_add(1, std::memory_order_acq_rel);
  queue_.push_back(std::move(task));
  if (!thread_.joinable()) thread_ = std::thread([this] { worker(); });
  cv_.notify_one();
}

void StreamQueue::wait_idle() {
  if (outstanding() == 0) return;
  std::unique_lock<std::mutex> lk(mu_);
  idle_cv_.wait(lk, [&] { return outstanding_.load(std::memory_order_acquire) == 0; });
}

void StreamQueue::stop() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stopping_ = true;
    cv_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
}

void StreamQueue::worker() {
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    cv_.wait(lk, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, nothing left
    std::unique_ptr<StreamTask> task = std::move(queue_.front());
    queue_.pop_front();
    lk.unlock();
    task->run();
    task.reset();
    lk.lock();
    if (outstanding_.fetch_sub(1, std::memory_order_acq_rel) == 1) idle_cv_.notify_all();
  }
}

}  // namespace chorus::core
