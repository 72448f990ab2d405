// Values the command-line tools accept: byte sizes ("64K", "128M") and durations
// ("500ms", "30s", "24h"), with CLI11 validators for them.
#pragma once
#include <chrono>
#include <cstddef>
#include <string>

#include <CLI/CLI.hpp>

namespace chorus_tools {

// "8", "64K", "16M", "1G" (powers of 1024; a trailing "B" or "iB" is accepted).
// Returns false for anything else.
bool parse_bytes(const std::string& text, std::size_t* bytes);

// "250ms", "30s", "5m", "24h", or a bare number of seconds ("90"). Returns false for
// anything else (negative numbers, unknown units, overflow).
bool parse_duration(const std::string& text, std::chrono::milliseconds* out);

// CLI11 validators built on the parsers above.
CLI::Validator bytes_validator();
CLI::Validator duration_validator();

}  // namespace chorus_tools
