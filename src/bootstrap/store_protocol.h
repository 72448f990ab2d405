// The TCP store wire protocol (docs/STORE.md): a 16-byte frame header (magic, version,
// op or reply status, request id, body length) and the body encodings of each command.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "bootstrap/store.h"
#include "util/status.h"

namespace chorus::bootstrap::proto {

inline constexpr std::uint32_t kMagic = 0x54534843;  // bytes "CHST" on the wire
inline constexpr std::uint16_t kVersion = 1;
inline constexpr std::size_t kHeaderSize = 16;
inline constexpr std::size_t kMaxKey = 64 * 1024;             // bytes per key
inline constexpr std::size_t kMaxValue = 64 * 1024 * 1024;    // bytes per value
inline constexpr std::size_t kMaxBody = kMaxValue + 1024 * 1024;  // bytes per frame body

// Request ops. A reply carries a status instead (0 = ok, else a chorus::ErrorCode).
enum class Op : std::uint16_t { kSet = 1, kGet = 2, kAdd = 3, kCheck = 4, kWait = 5 };
const char* to_string(Op op);

struct Header {
  std::uint16_t op_or_status = 0;
  std::uint32_t id = 0;
  std::uint32_t body_len = 0;
};

// Appends a header to `out`.
void put_header(Bytes& out, std::uint16_t op_or_status, std::uint32_t id, std::uint32_t body_len);
// Checks magic, version and the length cap of the kHeaderSize bytes at `p`; kIo on garbage.
Result<Header> parse_header(const std::uint8_t* p);

void put_u32(Bytes& out, std::uint32_t v);
void put_i64(Bytes& out, std::int64_t v);
void put_field(Bytes& out, const void* data, std::size_t n);  // u32 length + bytes
std::int64_t get_i64(const std::uint8_t* p);

// A decoded request.
struct Request {
  Op op = Op::kSet;
  std::uint32_t id = 0;
  std::vector<std::string> keys;  // one key, or several for kWait
  Bytes value;                     // kSet
  std::int64_t delta = 0;          // kAdd
};

// Builds a whole request frame.
Bytes encode_request(const Request& req);
// Decodes a request body; kIo naming the problem on an unknown op, a bad field length or
// trailing bytes.
Result<Request> parse_request(const Header& h, const std::uint8_t* body);

}  // namespace chorus::bootstrap::proto
