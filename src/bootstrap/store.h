// The internal rendezvous store interface (Status-returning; the public chorus::Store
// is adapted to it in src/api).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "util/deadline.h"
#include "util/status.h"

namespace chorus::bootstrap {

using Bytes = std::vector<std::uint8_t>;

// Thread-safe key-value store shared by every rank of a job.
class Store {
 public:
  virtual ~Store() = default;
  virtual Status set(const std::string& key, const Bytes& value) = 0;
  // Waits until `key` is set or `deadline` passes (kTimeout naming the key).
  virtual Result<Bytes> get(const std::string& key, Deadline deadline) = 0;
  // Adds `delta` to the decimal counter `key` (absent = 0); returns the new value.
  virtual Result<std::int64_t> add(const std::string& key, std::int64_t delta) = 0;
  // Waits until every key is set (kTimeout naming the first missing key).
  virtual Status wait(const std::vector<std::string>& keys, Deadline deadline) = 0;
  virtual Result<bool> check(const std::string& key) = 0;
};

// Views `base` with every key prefixed by `prefix` + "/".
class PrefixStore : public Store {
 public:
  PrefixStore(std::shared_ptr<Store> base, std::string prefix)
      : base_(std::move(base)), prefix_(std::move(prefix) + "/") {}
  Status set(const std::string& key, const Bytes& value) override { return base_->set(prefix_ + key, value); }
  Result<Bytes> get(const std::string& key, Deadline d) override { return base_->get(prefix_ + key, d); }
  Result<std::int64_t> add(const std::string& key, std::int64_t delta) override {
    return base_->add(prefix_ + key, delta);
  }
  Status wait(const std::vector<std::string>& keys, Deadline d) override {
    std::vector<std::string> full;
    full.reserve(keys.size());
    for (const auto& k : keys) full.push_back(prefix_ + k);
    return base_->wait(full, d);
  }
  Result<bool> check(const std::string& key) override { return base_->check(prefix_ + key); }

 private:
  std::shared_ptr<Store> base_;
  std::string prefix_;
};

// All-gathers one value per rank through the store: rank r sets "<name>/<r>" and every
// rank reads all `size` values (index = rank).
Result<std::vector<Bytes>> store_all_gather(Store& store, const std::string& name, int rank,
                                            int size, const Bytes& mine, Deadline deadline);

}  // namespace chorus::bootstrap
