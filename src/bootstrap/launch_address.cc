// Parsers for launcher-provided addresses: CHORUS_STORE_ADDR-style "host:port" and the
// first host of a compressed Slurm node list.
#include "bootstrap/launch_address.h"

#include "util/strings.h"

namespace chorus::bootstrap {

Result<HostPort> parse_host_port(const std::string& var, const std::string& value) {
  auto bad = [&](const char* why) {
    return invalid_argument(str_printf("%s='%s' is not host:port (%s)", var.c_str(), value.c_str(), why));
  };
  HostPort out;
  std::string port_text;
  if (!value.empty() && value[0] == '[') {
    auto close = value.find(']');
    if (close == std::string::npos || close + 1 >= value.size() || value[close + 1] != ':')
      return bad("expected [address]:port");
    out.host = value.substr(1, close - 1);
    port_text = value.substr(close + 2);
  } else {
    auto colon = value.rfind(':');
    if (colon == std::string::npos) return bad("missing ':port'");
    out.host = value.substr(0, colon);
    port_text = value.substr(colon + 1);
    if (out.host.find(':') != std::string::npos) return bad("write IPv6 addresses as [address]:port");
  }
  if (out.host.empty()) return bad("empty host");
  auto port = parse_int(port_text);
  if (!port || *port < 1 || *port > 65535) return bad("port must be an integer in [1, 65535]");
  out.port = static_cast<int>(*port);
  return out;
}

std::string slurm_first_host(const std::string& nodelist) {
  std::string out;
  std::size_t i = 0;
  const std::size_t n = nodelist.size();
  while (i < n && nodelist[i] != ',') {
    char c = nodelist[i];
    if (c == ']') return "";
    if (c != '[') {
      out += c;
      ++i;
      continue;
    }
    // A bracket group: keep the first item's first number, skip to the closing bracket.
    ++i;
    std::size_t start = i;
    while (i < n && nodelist[i] != '-' && nodelist[i] != ',' && nodelist[i] != ']') ++i;
    if (i == start) return "";
    out += nodelist.substr(start, i - start);
    while (i < n && nodelist[i] != ']') ++i;
    if (i == n) return "";
    ++i;
  }
  return std::string(str_trim(out));
}

}  // namespace chorus::bootstrap
