// Public store entry points (TCP client and server, file store) and the adapters.
#include "api/error.h"
#include "api/store_adapter.h"
#include "bootstrap/file_store.h"
#include "bootstrap/tcp_store.h"

namespace chorus {

Store::~Store() = default;
TcpStoreServer::~TcpStoreServer() = default;

namespace api {

void PublicStore::set(const std::string& key, const std::vector<std::uint8_t>& value) {
  throw_if_error(inner_->set(key, value));
}
std::vector<std::uint8_t> PublicStore::get(const std::string& key, std::chrono::milliseconds timeout) {
  return value_or_throw(inner_->get(key, Deadline::after(timeout)));
}
std::int64_t PublicStore::add(const std::string& key, std::int64_t delta) {
  return value_or_throw(inner_->add(key, delta));
}
void PublicStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  throw_if_error(inner_->wait(keys, Deadline::after(timeout)));
}
bool PublicStore::check(const std::string& key) { return value_or_throw(inner_->check(key)); }

namespace {

// A user-implemented public Store seen as an internal one.
class UserStore : public bootstrap::Store {
 public:
  explicit UserStore(std::shared_ptr<chorus::Store> user) : user_(std::move(user)) {}
  Status set(const std::string& key, const bootstrap::Bytes& value) override {
    try {
      user_->set(key, value);
      return Status();
    } catch (...) {
      return status_from_current_exception();
    }
  }
  Result<bootstrap::Bytes> get(const std::string& key, Deadline d) override {
    try {
      return user_->get(key, std::chrono::milliseconds(d.remaining_ms()));
    } catch (...) {
      return status_from_current_exception();
    }
  }
  Result<std::int64_t> add(const std::string& key, std::int64_t delta) override {
    try {
      return user_->add(key, delta);
    } catch (...) {
      return status_from_current_exception();
    }
  }
  Status wait(const std::vector<std::string>& keys, Deadline d) override {
    try {
      user_->wait(keys, std::chrono::milliseconds(d.remaining_ms()));
      return Status();
    } catch (...) {
      return status_from_current_exception();
    }
  }
  Result<bool> check(const std::string& key) override {
    try {
      return user_->check(key);
    } catch (...) {
      return status_from_current_exception();
    }
  }

 private:
  std::shared_ptr<chorus::Store> user_;
};

class ServerHandle : public chorus::TcpStoreServer {
 public:
  explicit ServerHandle(std::unique_ptr<bootstrap::TcpStoreServer> s) : server_(std::move(s)) {}
  int port() const override { return server_->port(); }

 private:
  std::unique_ptr<bootstrap::TcpStoreServer> server_;
};

}  // namespace

std::shared_ptr<bootstrap::Store> to_internal(std::shared_ptr<chorus::Store> store) {
  if (!store) return nullptr;
  if (auto* ours = dynamic_cast<PublicStore*>(store.get())) return ours->inner();
  return std::make_shared<UserStore>(std::move(store));
}

}  // namespace api

std::shared_ptr<Store> connect_tcp_store(const std::string& host, int port,
                                         std::chrono::milliseconds timeout) {
  if (port <= 0 || port > 65535)
    throw Error(ErrorCode::kInvalidArgument, "port must be in [1, 65535], got " + std::to_string(port));
  auto inner = api::value_or_throw(bootstrap::connect_tcp_store(host, port, Deadline::after(timeout)));
  return std::make_shared<api::PublicStore>(std::move(inner));
}

std::shared_ptr<Store> open_file_store(const std::string& directory) {
  if (directory.empty()) throw Error(ErrorCode::kInvalidArgument, "directory must not be empty");
  return std::make_shared<api::PublicStore>(api::value_or_throw(bootstrap::open_file_store(directory)));
}

std::unique_ptr<TcpStoreServer> TcpStoreServer::start(const std::string& host, int port) {
  if (port < 0 || port > 65535)
    throw Error(ErrorCode::kInvalidArgument, "port must be in [0, 65535], got " + std::to_string(port));
  return std::make_unique<api::ServerHandle>(
      api::value_or_throw(bootstrap::TcpStoreServer::start(host, port)));
}

}  // namespace chorus
