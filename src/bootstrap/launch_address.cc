// Parsers for launcher-provided addresses: CHORUS_STORE_ADDR-style "host:port" and the
// first host of a compressed Slurm node list.
#include "bootstrap/launch_address.h"

#include "util/strings.h"

namespace chorus::bootstrap {

Result<HostPort> parse_host_port(const std::string& var, const std::string& value) {
  auto parsed = net::parse_host_port(value);
  if (!parsed) return Status(ErrorCode::kInvalidArgument, var + "=" + parsed.status().message());
  return parsed;
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
