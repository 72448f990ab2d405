// StoreWatch: the agent's background store poller (see store_watch.h).
#include "store_watch.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>

#include "chorus/status.h"

namespace chorus_run {
namespace {

constexpr auto kPollEvery = std::chrono::milliseconds(150);
constexpr auto kGetTimeout = std::chrono::milliseconds(2000);

std::vector<std::uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }
std::string beat_key(int node) { return "chorus-run/node/" + std::to_string(node) + "/beat"; }

}  // namespace

StoreWatch::StoreWatch(std::shared_ptr<chorus::Store> store, int node, int nnodes,
                       std::string where)
    : store_(std::move(store)),
      node_(node),
      nnodes_(nnodes),
      where_(std::move(where)),
      wake_fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)),
      last_ok_(std::chrono::steady_clock::now()),
      beats_(static_cast<std::size_t>(nnodes), -1),
      beat_at_(static_cast<std::size_t>(nnodes), last_ok_) {
  thread_ = std::thread([this] { loop(); });
}

StoreWatch::~StoreWatch() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  // A call stuck on a dead link would hold the exit for up to a minute: leave it behind
  // (the process exits with _exit right after).
  if (in_call_) {
    thread_.detach();
  } else {
    thread_.join();
    close(wake_fd_);
  }
}

std::string StoreWatch::stop_reason() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!remote_.empty()) return remote_;
  if (!lost_.empty()) return lost_;
  if (std::chrono::steady_clock::now() - last_ok_ > kSilence)
    return "the store at " + where_ + " has not answered for " +
           std::to_string(std::chrono::duration_cast<std::chrono::seconds>(kSilence).count()) +
           " s (master node or link down?)";
  return "";
}

void StoreWatch::local_failure(const std::string& what) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!failure_.empty()) return;
    failure_ = what;
  }
  cv_.notify_all();
}

void StoreWatch::node_done() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_queued_ = true;
  }
  cv_.notify_all();
}

void StoreWatch::leaving() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    left_queued_ = true;
  }
  cv_.notify_all();
}

bool StoreWatch::flushed() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!lost_.empty()) return true;
  return (failure_.empty() || failure_sent_) && (!done_queued_ || done_sent_) &&
         (!left_queued_ || left_sent_);
}

bool StoreWatch::failure_reported() {
  std::lock_guard<std::mutex> lock(mu_);
  return !failure_.empty();
}

void StoreWatch::wake() {
  std::uint64_t one = 1;
  ssize_t n = write(wake_fd_, &one, sizeof(one));
  (void)n;
}

void StoreWatch::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_ && lost_.empty()) {
    lock.unlock();
    in_call_ = true;
    try {
      poll_once();
      lock.lock();
      last_ok_ = std::chrono::steady_clock::now();
    } catch (const std::exception& e) {
      lock.lock();
      lost_ = "lost the connection to the store at " + where_ + ": " + e.what();
      wake();
    }
    in_call_ = false;
    cv_.wait_for(lock, kPollEvery, [this] {
      return stop_ || (!failure_.empty() && !failure_sent_) || (done_queued_ && !done_sent_) ||
             (left_queued_ && !left_sent_);
    });
  }
}

// One round: send what is queued, then read the others' state. Throws on store errors.
void StoreWatch::poll_once() {
  std::string failure;
  bool send_done, send_left;
  {
    std::lock_guard<std::mutex> lock(mu_);
    failure = failure_sent_ ? "" : failure_;
    send_done = done_queued_ && !done_sent_;
    send_left = left_queued_ && !left_sent_;
  }
  // The first failure wins; a later one (often a consequence) does not overwrite it.
  if (!failure.empty() && store_->add(kFailedKey + "/count", 1) == 1)
    store_->set(kFailedKey, bytes(std::to_string(node_) + "\n" + failure));
  if (send_done) store_->add(kDoneKey, 1);
  store_->add(beat_key(node_), 1);
  if (send_left) store_->add(kLeftKey, 1);
  {
    std::lock_guard<std::mutex> lock(mu_);
    failure_sent_ = failure_sent_ || !failure.empty();
    done_sent_ = done_sent_ || send_done;
    left_sent_ = left_sent_ || send_left;
  }
  if (store_->check(kFailedKey)) {
    auto v = store_->get(kFailedKey, kGetTimeout);
    std::string text(v.begin(), v.end());
    std::size_t nl = text.find('\n');
    std::string node = text.substr(0, nl);
    std::lock_guard<std::mutex> lock(mu_);
    // Our own report is not news; a failure node 0 recorded for us (silence) is.
    if (nl != std::string::npos && (node != std::to_string(node_) || failure_.empty())) {
      if (remote_.empty()) {
        remote_ = "node " + node + " failed: " + text.substr(nl + 1);
        wake();
      }
    }
  }
  done_count_ = store_->add(kDoneKey, 0);
  left_count_ = store_->add(kLeftKey, 0);
  if (node_ == 0) check_heartbeats();
}

// Node 0 only: an agent killed with its ranks (or cut off) leaves no failure behind; its
// heartbeat standing still for kSilence is recorded as its failure (unless one is known).
// Once every node is done, agents leave and stop beating: nothing is checked then.
void StoreWatch::check_heartbeats() {
  if (done_count_ >= nnodes_) return;
  bool known;
  {
    std::lock_guard<std::mutex> lock(mu_);
    known = !remote_.empty() || !failure_.empty();
  }
  const auto now = std::chrono::steady_clock::now();
  int silent = 0, first_silent = -1;
  for (int k = 1; k < nnodes_; ++k) {
    long long beat = store_->add(beat_key(k), 0);
    if (beat != beats_[k]) {
      beats_[k] = beat;
      beat_at_[k] = now;
    } else if (now - beat_at_[k] > kSilence) {
      ++silent;
      if (first_silent < 0) first_silent = k;
    }
  }
  silent_nodes_ = silent;
  if (known || first_silent < 0) return;
  // The next poll reads the failure like any other.
  if (store_->add(kFailedKey + "/count", 1) == 1)
    store_->set(kFailedKey, bytes(std::to_string(first_silent) + "\nits chorus-run has not been heard of for " +
                                  std::to_string(std::chrono::duration_cast<std::chrono::seconds>(kSilence).count()) +
                                  " s (killed, or its link is down?)"));
}

}  // namespace chorus_run
