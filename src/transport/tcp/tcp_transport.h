// TCP transport: a full mesh of sockets between the ranks, one progress engine per
// transport driven by whichever threads wait.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config/defaults.h"
#include "transport/transport.h"

namespace chorus::tcp {

struct TcpOptions {
  int rank = 0;
  int size = 1;
  std::uint64_t job_token = 0;      // every frame and handshake carries it; strangers are dropped
  std::string listen_host = "127.0.0.1";  // address to bind and advertise
  // When set (CHORUS_SOCKET_IFNAME), bind and advertise this interface's IPv4 address
  // instead of listen_host; an unknown name fails set-up with kInvalidArgument.
  std::string interface_name;
  // When set and no interface is named, advertised instead of listen_host (used when
  // listen_host is a wildcard such as 0.0.0.0, which peers cannot connect to).
  std::string advertise_host;
  // The rest default to the parameter table's values (core sets them from CommConfig).
  std::size_t eager_bytes = config::defaults::eager_bytes;  // larger: wait for the receiver
  std::size_t socket_buffer_bytes = config::defaults::socket_buffer_bytes;  // 0 = kernel's
  std::int64_t spin_us = config::defaults::spin_us;  // busy-wait before poll (spin_policy.h)
  Deadline connect_deadline;
  transport::SignatureFormatter describe_sig = nullptr;  // for kDesync messages
};

// Exchanges this rank's listening address ("host:port") for everyone's, index = rank
// (implemented by the caller over the store, so the transport never sees bootstrap).
using AddressExchange = std::function<Result<std::vector<std::string>>(const std::string& mine)>;

// Listens, exchanges addresses, connects to every peer and validates handshakes.
// kTimeout naming the missing peers when connect_deadline passes; kIo on socket errors.
Result<std::unique_ptr<transport::Transport>> create_tcp_transport(const TcpOptions& opts,
                                                                   const AddressExchange& exchange);

}  // namespace chorus::tcp
