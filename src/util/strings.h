// Small string helpers: printf-style formatting, splitting, size parsing.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace chorus {

// printf into a std::string.
std::string str_printf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// Splits on `sep`, keeping empty fields.
std::vector<std::string> str_split(std::string_view s, char sep);
std::string_view str_trim(std::string_view s);
// Parses "123", "64K", "1M", "2G" (powers of 1024, case-insensitive, optional "B"/"iB").
// Returns nullopt on malformed input or overflow.
std::optional<std::uint64_t> parse_size(std::string_view s);
// Parses a decimal integer (optional sign). nullopt on malformed input or overflow.
std::optional<std::int64_t> parse_int(std::string_view s);
// "8 B", "64 KiB", "16 MiB" for exact powers, else bytes.
std::string format_size(std::uint64_t bytes);

}  // namespace chorus
