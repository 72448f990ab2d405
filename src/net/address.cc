// Addresses: "host:port" parsing and formatting, interface lookup, local socket address.
#include "net/address.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <memory>

#include "util/strings.h"

namespace chorus::net {
namespace {

struct IfAddrsDeleter {
  void operator()(ifaddrs* a) const { freeifaddrs(a); }
};
using IfAddrsPtr = std::unique_ptr<ifaddrs, IfAddrsDeleter>;

IfAddrsPtr get_ifaddrs() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return nullptr;
  return IfAddrsPtr(list);
}

// The local address of `fd`, or false.
bool local_sockaddr(int fd, sockaddr_storage* ss) {
  socklen_t len = sizeof(*ss);
  return ::getsockname(fd, reinterpret_cast<sockaddr*>(ss), &len) == 0;
}

}  // namespace

Result<HostPort> parse_host_port(const std::string& address) {
  auto bad = [&](const char* why) {
    return invalid_argument(str_printf("'%s' is not host:port (%s)", address.c_str(), why));
  };
  HostPort out;
  std::string port_text;
  if (!address.empty() && address[0] == '[') {
    auto close = address.find(']');
    if (close == std::string::npos || close + 1 >= address.size() || address[close + 1] != ':')
      return bad("expected [address]:port");
    out.host = address.substr(1, close - 1);
    port_text = address.substr(close + 2);
  } else {
    auto colon = address.rfind(':');
    if (colon == std::string::npos) return bad("missing ':port'");
    out.host = address.substr(0, colon);
    port_text = address.substr(colon + 1);
    if (out.host.find(':') != std::string::npos) return bad("write IPv6 addresses as [address]:port");
  }
  if (out.host.empty()) return bad("empty host");
  auto port = parse_int(port_text);
  if (!port || *port < 1 || *port > 65535) return bad("port must be an integer in [1, 65535]");
  out.port = static_cast<int>(*port);
  return out;
}

std::string format_host_port(const std::string& host, int port) {
  if (host.find(':') != std::string::npos) return str_printf("[%s]:%d", host.c_str(), port);
  return str_printf("%s:%d", host.c_str(), port);
}

std::vector<std::string> ipv4_interfaces() {
  std::vector<std::string> names;
  IfAddrsPtr list = get_ifaddrs();
  for (const ifaddrs* a = list.get(); a != nullptr; a = a->ifa_next) {
    if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != AF_INET || a->ifa_name == nullptr)
      continue;
    if (std::find(names.begin(), names.end(), a->ifa_name) == names.end())
      names.emplace_back(a->ifa_name);
  }
  return names;
}

Result<std::string> interface_ipv4(const std::string& name) {
  IfAddrsPtr list = get_ifaddrs();
  if (!list) return io_error("getifaddrs", errno);
  for (const ifaddrs* a = list.get(); a != nullptr; a = a->ifa_next) {
    if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != AF_INET || a->ifa_name == nullptr ||
        name != a->ifa_name)
      continue;
    char text[INET_ADDRSTRLEN] = {};
    const auto* sin = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
    if (::inet_ntop(AF_INET, &sin->sin_addr, text, sizeof(text)) == nullptr)
      return io_error("inet_ntop", errno);
    return std::string(text);
  }
  std::string present;
  for (const std::string& n : ipv4_interfaces()) present += (present.empty() ? "" : ", ") + n;
  return invalid_argument(str_printf("CHORUS_SOCKET_IFNAME: no interface '%s' with an IPv4 "
                                     "address; interfaces present: %s",
                                     name.c_str(), present.empty() ? "(none)" : present.c_str()));
}

std::string local_ip(int fd) {
  sockaddr_storage ss{};
  if (!local_sockaddr(fd, &ss)) return "";
  char buf[INET6_ADDRSTRLEN] = {0};
  if (ss.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&ss)->sin_addr, buf, sizeof(buf));
  } else if (ss.ss_family == AF_INET6) {
    auto* a6 = reinterpret_cast<sockaddr_in6*>(&ss);
    if (IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr)) {
      inet_ntop(AF_INET, &a6->sin6_addr.s6_addr[12], buf, sizeof(buf));
    } else {
      inet_ntop(AF_INET6, &a6->sin6_addr, buf, sizeof(buf));
    }
  } else {
    return "";
  }
  return buf;
}

Result<int> local_port(int fd) {
  sockaddr_storage ss{};
  if (!local_sockaddr(fd, &ss)) return io_error("getsockname", errno);
  if (ss.ss_family == AF_INET) return int{ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port)};
  if (ss.ss_family == AF_INET6) return int{ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port)};
  return Status(ErrorCode::kIo, "getsockname: unknown address family");
}

}  // namespace chorus::net
