// Addresses: "host:port" text to and from HostPort, the IPv4 address of a named interface,
// and the local address (IP, port) of a socket.
#pragma once
#include <string>
#include <vector>

#include "util/status.h"

namespace chorus::net {

struct HostPort {
  std::string host;  // name, dotted quad or IPv6 text (without brackets)
  int port = 0;
};

// Parses "host:port", or "[v6addr]:port" for IPv6 (an unbracketed host may not contain ':').
// The host must not be empty and the port must be an integer in [1, 65535].
// kInvalidArgument "'<address>' is not host:port (<why>)" otherwise.
Result<HostPort> parse_host_port(const std::string& address);

// "host:port", or "[host]:port" when host contains ':' (IPv6); parse_host_port reads it back.
std::string format_host_port(const std::string& host, int port);

// The IPv4 address (dotted quad) of network interface `name` (getifaddrs). kInvalidArgument
// naming CHORUS_SOCKET_IFNAME and listing the interfaces present when no interface of that
// name has an IPv4 address; kIo when the interfaces cannot be read.
Result<std::string> interface_ipv4(const std::string& name);

// Names of the interfaces that have an IPv4 address, in getifaddrs order, without repeats.
std::vector<std::string> ipv4_interfaces();

// The numeric local IP of a bound or connected socket (an IPv4-mapped IPv6 address as the
// dotted quad); "" on failure.
std::string local_ip(int fd);

// The local port of a bound socket (e.g. a listener bound to port 0). kIo on failure.
Result<int> local_port(int fd);

}  // namespace chorus::net
