// TcpStoreClient: the Store interface over one connection to a TcpStoreServer. One
// request is in flight at a time (a mutex); every call has a deadline. A call that fails
// mid-request (timeout, bad reply) closes the connection so a late reply can never be
// read as the answer to a later request; the next call reconnects.
#include <chrono>
#include <mutex>

#include "bootstrap/store_protocol.h"
#include "bootstrap/tcp_store.h"
#include "diag/log.h"
#include "net/address.h"
#include "net/socket.h"
#include "net/stream_io.h"
#include "util/strings.h"

namespace chorus::bootstrap {
namespace {

using proto::Op;

constexpr auto kDefaultTimeout = std::chrono::seconds(60);  // set / add / check
constexpr auto kReconnectTimeout = std::chrono::seconds(10);
constexpr auto kProbeTimeout = std::chrono::seconds(2);  // naming the missing key of a WAIT

std::string quote_keys(const std::vector<std::string>& keys) {
  if (keys.size() == 1) return "key '" + keys[0] + "'";
  return str_printf("%zu keys (first '%s')", keys.size(), keys.empty() ? "" : keys[0].c_str());
}

class TcpStoreClient final : public Store {
 public:
  TcpStoreClient(std::string host, int port, UniqueFd fd)
      : host_(std::move(host)), port_(port), fd_(std::move(fd)), local_(net::local_ip(fd_.get())) {}

  Status set(const std::string& key, const Bytes& value) override {
    if (value.size() > proto::kMaxValue)
      return invalid_argument(str_printf("store value for key '%s' is %zu bytes (cap %zu)",
                                         key.c_str(), value.size(), proto::kMaxValue));
    proto::Request req{Op::kSet, 0, {key}, value, 0};
    return call(req, Deadline::after(kDefaultTimeout)).status();
  }

  Result<Bytes> get(const std::string& key, Deadline deadline) override {
    return call(proto::Request{Op::kGet, 0, {key}, {}, 0}, deadline);
  }

  Result<std::int64_t> add(const std::string& key, std::int64_t delta) override {
    CHORUS_ASSIGN_OR_RETURN(Bytes r, call(proto::Request{Op::kAdd, 0, {key}, {}, delta},
                                          Deadline::after(kDefaultTimeout)));
    if (r.size() != 8) return bad_reply("ADD reply is not 8 bytes");
    return proto::get_i64(r.data());
  }

  Status wait(const std::vector<std::string>& keys, Deadline deadline) override {
    if (keys.empty()) return Status();
    proto::Request req{Op::kWait, 0, keys, {}, 0};
    std::lock_guard<std::mutex> lock(mu_);
    Result<Bytes> r = call_locked(req, deadline);
    if (r || r.status().code() != ErrorCode::kTimeout) return r.status();
    // Name the first key still missing (best effort, on a fresh connection).
    Deadline probe = Deadline::after(kProbeTimeout);
    for (const auto& k : keys) {
      Result<Bytes> present = call_locked(proto::Request{Op::kCheck, 0, {k}, {}, 0}, probe);
      if (!present) break;
      if (present->size() == 1 && (*present)[0] == 0)
        return timeout_error(str_printf("timed out waiting for store key '%s' (%zu keys awaited) at %s",
                                        k.c_str(), keys.size(), where().c_str()));
    }
    return r.status();
  }

  Result<bool> check(const std::string& key) override {
    CHORUS_ASSIGN_OR_RETURN(Bytes r, call(proto::Request{Op::kCheck, 0, {key}, {}, 0},
                                          Deadline::after(kDefaultTimeout)));
    if (r.size() != 1) return bad_reply("CHECK reply is not 1 byte");
    return r[0] != 0;
  }

  std::string local_address() const {
    std::lock_guard<std::mutex> lock(mu_);
    return local_;
  }

 private:
  std::string where() const { return str_printf("%s:%d", host_.c_str(), port_); }
  Status bad_reply(const std::string& what) {
    return Status(ErrorCode::kIo, "malformed reply from store at " + where() + ": " + what);
  }

  Result<Bytes> call(const proto::Request& req, Deadline deadline) {
    std::lock_guard<std::mutex> lock(mu_);
    return call_locked(req, deadline);
  }

  Result<Bytes> call_locked(proto::Request req, Deadline deadline);

  const std::string host_;
  const int port_;
  mutable std::mutex mu_;
  UniqueFd fd_;  // invalid after a failed call: reconnect on the next one
  std::string local_;
  std::uint32_t next_id_ = 1;
};

Result<Bytes> TcpStoreClient::call_locked(proto::Request req, Deadline deadline) {
  const std::string what = str_printf("store %s of %s at %s", proto::to_string(req.op),
                                      quote_keys(req.keys).c_str(), where().c_str());
  if (!fd_.valid()) {
    Deadline d = Deadline::earliest(deadline, Deadline::after(kReconnectTimeout));
    auto fd = net::connect_tcp({host_, port_}, {.retry = false}, d);
    if (!fd) return fd.status().with_context(what + ": reconnecting");
    fd_ = std::move(fd).value();
    local_ = net::local_ip(fd_.get());
    CHORUS_LOG(DEBUG, Boot, "reconnected to store at %s", where().c_str());
  }
  req.id = next_id_++;
  Bytes frame = proto::encode_request(req);
  Status st = net::send_all(fd_.get(), frame.data(), frame.size(), deadline);
  std::uint8_t head[proto::kHeaderSize];
  if (st) st = net::recv_all(fd_.get(), head, sizeof(head), deadline);
  if (!st) {
    fd_.reset();  // the reply may still come; never read it as another request's answer
    if (st.code() == ErrorCode::kTimeout) {
      const char* verb = (req.op == Op::kGet || req.op == Op::kWait) ? "waiting for" : "on";
      return timeout_error(str_printf("timed out %s %s at %s", verb, quote_keys(req.keys).c_str(),
                                      where().c_str()));
    }
    if (st.code() == ErrorCode::kPeerLost)
      return Status(ErrorCode::kPeerLost, what + ": the store server closed the connection "
                                                  "(did the process hosting it exit?)");
    return st.with_context(what);
  }
  auto h = proto::parse_header(head);
  if (!h || h->id != req.id) {
    fd_.reset();
    return bad_reply(h ? str_printf("reply id %u for request %u", h->id, req.id)
                       : h.status().message());
  }
  Bytes body(h->body_len);
  st = net::recv_all(fd_.get(), body.data(), body.size(), Deadline::after(kDefaultTimeout));
  if (!st) {
    fd_.reset();
    return st.with_context(what + ": reading reply");
  }
  if (h->op_or_status != 0) {
    auto code = static_cast<ErrorCode>(h->op_or_status);
    if (h->op_or_status > static_cast<std::uint16_t>(ErrorCode::kInternal)) code = ErrorCode::kInternal;
    return Status(code, std::string(body.begin(), body.end()));
  }
  return body;
}

}  // namespace

Result<std::shared_ptr<Store>> connect_tcp_store(const std::string& host, int port,
                                                 Deadline deadline) {
  if (host.empty()) return invalid_argument("store host must not be empty");
  if (port < 1 || port > 65535)
    return invalid_argument(str_printf("store port must be in [1, 65535], got %d", port));
  auto fd = net::connect_tcp({host, port}, {.retry = true}, deadline);
  if (!fd) return fd.status().with_context("connecting to the TCP store");
  CHORUS_LOG(INFO, Boot, "connected to store at %s:%d", host.c_str(), port);
  return std::shared_ptr<Store>(std::make_shared<TcpStoreClient>(host, port, std::move(fd).value()));
}

std::string tcp_store_local_address(const Store& store) {
  const auto* client = dynamic_cast<const TcpStoreClient*>(&store);
  return client ? client->local_address() : "";
}

}  // namespace chorus::bootstrap
