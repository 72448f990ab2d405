// C10dStore (see c10d_store.h): chorus::Store calls forwarded to torch's store, a failed
// wait turned into chorus's kTimeout.
#include "c10d_store.h"

#include <exception>

#include "chorus/status.h"

namespace chorus::torch_backend {

void C10dStore::set(const std::string& key, const std::vector<std::uint8_t>& value) {
  store_->set(key, value);
}

std::vector<std::uint8_t> C10dStore::get(const std::string& key, std::chrono::milliseconds timeout) {
  wait({key}, timeout);
  return store_->get(key);
}

std::int64_t C10dStore::add(const std::string& key, std::int64_t delta) {
  return store_->add(key, delta);
}

void C10dStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  try {
    store_->wait(keys, timeout);
  } catch (const std::exception& e) {
    throw chorus::Error(ErrorCode::kTimeout, std::string("torch store: waiting for '") +
                                                 (keys.empty() ? "" : keys[0]) + "' failed: " +
                                                 e.what());
  }
}

bool C10dStore::check(const std::string& key) { return store_->check({key}); }

}  // namespace chorus::torch_backend
