// Parsing helpers for launcher variables: "host:port" store addresses and Slurm's
// compressed node lists.
#pragma once
#include <string>

#include "net/address.h"
#include "util/status.h"

namespace chorus::bootstrap {

using net::HostPort;

// Parses the value of launcher variable `var` as net::parse_host_port does ("host:port"
// or "[v6addr]:port", port in [1, 65535]). kInvalidArgument "<var>='<value>' is not
// host:port (<why>)".
Result<HostPort> parse_host_port(const std::string& var, const std::string& value);

// The first host of a Slurm node list: "node[01-04,07],gpu5" -> "node01",
// "rack[1-2]-n[3,5]" -> "rack1-n3". "" when the list is empty or malformed.
std::string slurm_first_host(const std::string& nodelist);

}  // namespace chorus::bootstrap
