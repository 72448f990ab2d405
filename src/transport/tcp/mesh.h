// Forms the full mesh of TCP connections between ranks: listen, exchange addresses,
// higher rank connects to lower rank and sends a hello; the acceptor validates it.
#pragma once
#include <string>
#include <vector>

#include "transport/tcp/tcp_transport.h"
#include "util/status.h"
#include "util/unique_fd.h"

namespace chorus::tcp {

struct Mesh {
  std::vector<UniqueFd> fds;            // index = peer rank; invalid for self
  std::vector<std::string> addresses;   // "host:port" of every rank's listener
};

// Binds the listener to the IPv4 address of opts.interface_name when set (else to
// opts.listen_host) and advertises that address (or opts.advertise_host when set and no
// interface is named). The listener lives only during set-up: once the mesh is formed it is
// closed, so a stranger can reach this rank only while build_mesh runs.
// Connects to every peer by opts.connect_deadline. A connection whose hello is malformed
// (stranger, garbage, wrong token or rank, duplicate) is closed with a WARN and ignored.
// kTimeout naming the ranks not connected; kInvalidArgument for bad options or an
// exchange result of the wrong size or an unknown interface; kIo on socket errors. size == 1 opens no socket.
Result<Mesh> build_mesh(const TcpOptions& opts, const AddressExchange& exchange);

}  // namespace chorus::tcp
