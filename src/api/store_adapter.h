// Adapters between the public chorus::Store (throws) and bootstrap::Store (Status).
#pragma once
#include <memory>

#include "bootstrap/store.h"
#include "chorus/store.h"

namespace chorus::api {

// Public face of an internal store (TCP client, file store): throws chorus::Error.
class PublicStore : public chorus::Store {
 public:
  explicit PublicStore(std::shared_ptr<bootstrap::Store> inner) : inner_(std::move(inner)) {}
  void set(const std::string& key, const std::vector<std::uint8_t>& value) override;
  std::vector<std::uint8_t> get(const std::string& key, std::chrono::milliseconds timeout) override;
  std::int64_t add(const std::string& key, std::int64_t delta) override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  bool check(const std::string& key) override;
  const std::shared_ptr<bootstrap::Store>& inner() const { return inner_; }

 private:
  std::shared_ptr<bootstrap::Store> inner_;
};

// The internal view of any public store: our own stores are unwrapped, a user's store
// is wrapped so its exceptions become Statuses.
std::shared_ptr<bootstrap::Store> to_internal(std::shared_ptr<chorus::Store> store);

}  // namespace chorus::api
