// Encoding and validation of TCP store frames (layout in docs/STORE.md). Nothing read
// from the wire is used before its magic, version and lengths are checked.
#include "bootstrap/store_protocol.h"

#include "util/strings.h"

namespace chorus::bootstrap::proto {
namespace {

std::uint32_t get_u32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

// Walks a body, refusing to read past its end.
class Reader {
 public:
  Reader(const std::uint8_t* p, std::size_t n) : p_(p), n_(n) {}
  bool u32(std::uint32_t& v) {
    if (n_ < 4) return false;
    v = get_u32(p_);
    skip(4);
    return true;
  }
  bool i64(std::int64_t& v) {
    if (n_ < 8) return false;
    v = get_i64(p_);
    skip(8);
    return true;
  }
  bool field(const std::uint8_t*& data, std::size_t& len, std::size_t cap) {
    std::uint32_t l = 0;
    if (!u32(l) || l > cap || l > n_) return false;
    data = p_;
    len = l;
    skip(l);
    return true;
  }
  bool key(std::string& out) {
    const std::uint8_t* d = nullptr;
    std::size_t l = 0;
    if (!field(d, l, kMaxKey)) return false;
    out.assign(reinterpret_cast<const char*>(d), l);
    return true;
  }
  bool done() const { return n_ == 0; }

 private:
  void skip(std::size_t k) {
    p_ += k;
    n_ -= k;
  }
  const std::uint8_t* p_;
  std::size_t n_;
};

}  // namespace

const char* to_string(Op op) {
  switch (op) {
    case Op::kSet: return "SET";
    case Op::kGet: return "GET";
    case Op::kAdd: return "ADD";
    case Op::kCheck: return "CHECK";
    case Op::kWait: return "WAIT";
  }
  return "?";
}

void put_u32(Bytes& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

void put_i64(Bytes& out, std::int64_t v) {
  auto u = static_cast<std::uint64_t>(v);
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>(u >> (8 * i)));
}

std::int64_t get_i64(const std::uint8_t* p) {
  std::uint64_t u = 0;
  for (int i = 7; i >= 0; --i) u = (u << 8) | p[i];
  return static_cast<std::int64_t>(u);
}

void put_field(Bytes& out, const void* data, std::size_t n) {
  put_u32(out, static_cast<std::uint32_t>(n));
  const auto* b = static_cast<const std::uint8_t*>(data);
  out.insert(out.end(), b, b + n);
}

void put_header(Bytes& out, std::uint16_t op_or_status, std::uint32_t id, std::uint32_t body_len) {
  put_u32(out, kMagic);
  out.push_back(static_cast<std::uint8_t>(kVersion & 0xff));
  out.push_back(static_cast<std::uint8_t>(kVersion >> 8));
  out.push_back(static_cast<std::uint8_t>(op_or_status & 0xff));
  out.push_back(static_cast<std::uint8_t>(op_or_status >> 8));
  put_u32(out, id);
  put_u32(out, body_len);
}

Result<Header> parse_header(const std::uint8_t* p) {
  std::uint32_t magic = get_u32(p);
  if (magic != kMagic)
    return Status(ErrorCode::kIo, str_printf("bad store frame magic 0x%08x (expected 0x%08x)",
                                             magic, kMagic));
  std::uint16_t version = static_cast<std::uint16_t>(p[4] | p[5] << 8);
  if (version != kVersion)
    return Status(ErrorCode::kIo, str_printf("unsupported store protocol version %u (expected %u)",
                                             version, kVersion));
  Header h;
  h.op_or_status = static_cast<std::uint16_t>(p[6] | p[7] << 8);
  h.id = get_u32(p + 8);
  h.body_len = get_u32(p + 12);
  if (h.body_len > kMaxBody)
    return Status(ErrorCode::kIo, str_printf("store frame body of %u bytes exceeds the %zu-byte cap",
                                             h.body_len, kMaxBody));
  return h;
}

Bytes encode_request(const Request& req) {
  Bytes body;
  switch (req.op) {
    case Op::kSet:
      put_field(body, req.keys[0].data(), req.keys[0].size());
      put_field(body, req.value.data(), req.value.size());
      break;
    case Op::kAdd:
      put_field(body, req.keys[0].data(), req.keys[0].size());
      put_i64(body, req.delta);
      break;
    case Op::kGet:
    case Op::kCheck:
      put_field(body, req.keys[0].data(), req.keys[0].size());
      break;
    case Op::kWait:
      put_u32(body, static_cast<std::uint32_t>(req.keys.size()));
      for (const auto& k : req.keys) put_field(body, k.data(), k.size());
      break;
  }
  Bytes frame;
  frame.reserve(kHeaderSize + body.size());
  put_header(frame, static_cast<std::uint16_t>(req.op), req.id, static_cast<std::uint32_t>(body.size()));
  frame.insert(frame.end(), body.begin(), body.end());
  return frame;
}

Result<Request> parse_request(const Header& h, const std::uint8_t* body) {
  Request req;
  req.id = h.id;
  Reader r(body, h.body_len);
  std::string key;
  bool ok = true;
  switch (h.op_or_status) {
    case static_cast<std::uint16_t>(Op::kSet): {
      const std::uint8_t* v = nullptr;
      std::size_t n = 0;
      ok = r.key(key) && r.field(v, n, kMaxValue);
      if (ok) req.value.assign(v, v + n);
      break;
    }
    case static_cast<std::uint16_t>(Op::kAdd):
      ok = r.key(key) && r.i64(req.delta);
      break;
    case static_cast<std::uint16_t>(Op::kGet):
    case static_cast<std::uint16_t>(Op::kCheck):
      ok = r.key(key);
      break;
    case static_cast<std::uint16_t>(Op::kWait): {
      std::uint32_t count = 0;
      ok = r.u32(count) && count <= h.body_len / 4;
      for (std::uint32_t i = 0; ok && i < count; ++i) {
        ok = r.key(key);
        if (ok) req.keys.push_back(std::move(key));
      }
      break;
    }
    default:
      return Status(ErrorCode::kIo, str_printf("unknown store op %u", h.op_or_status));
  }
  req.op = static_cast<Op>(h.op_or_status);
  if (!ok || !r.done())
    return Status(ErrorCode::kIo, str_printf("malformed %s request body (%u bytes)",
                                             to_string(req.op), h.body_len));
  if (req.op != Op::kWait) req.keys.push_back(std::move(key));
  return req;
}

}  // namespace chorus::bootstrap::proto
