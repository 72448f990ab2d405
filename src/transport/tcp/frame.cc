// Encoding, decoding and validation of the 64-byte frame header (layout in docs/WIRE.md).
#include "transport/tcp/frame.h"

#include "util/strings.h"

namespace chorus::tcp {
namespace {

template <class T>
void put_le(std::uint8_t* p, T v) {
  for (std::size_t i = 0; i < sizeof(T); ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

template <class T>
T get_le(const std::uint8_t* p) {
  T v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) v |= static_cast<T>(static_cast<T>(p[i]) << (8 * i));
  return v;
}

}  // namespace

const char* frame_kind_name(FrameKind kind) {
  switch (kind) {
    case FrameKind::kHello: return "hello";
    case FrameKind::kEager: return "eager";
    case FrameKind::kRts: return "rts";
    case FrameKind::kCts: return "cts";
    case FrameKind::kData: return "data";
    case FrameKind::kNack: return "nack";
    case FrameKind::kCancel: return "cancel";
    case FrameKind::kAbort: return "abort";
    case FrameKind::kDesync: return "desync";
    case FrameKind::kBye: return "bye";
    case FrameKind::kRtr: return "rtr";
    case FrameKind::kPut: return "put";
  }
  return "unknown";
}

void encode_frame(const FrameHeader& h, std::uint8_t* out) {
  put_le<std::uint32_t>(out + 0, h.magic);
  put_le<std::uint16_t>(out + 4, h.version);
  put_le<std::uint16_t>(out + 6, static_cast<std::uint16_t>(h.kind));
  put_le<std::uint64_t>(out + 8, h.job_token);
  put_le<std::uint32_t>(out + 16, h.tag.comm);
  put_le<std::uint32_t>(out + 20, h.tag.step);
  put_le<std::uint64_t>(out + 24, h.tag.seq);
  put_le<std::uint64_t>(out + 32, h.length);
  put_le<std::uint64_t>(out + 40, h.arg);
  put_le<std::uint64_t>(out + 48, h.tag.sig);
  put_le<std::uint64_t>(out + 56, h.kind == FrameKind::kDesync ? h.peer_sig : h.progress);
}

FrameHeader decode_frame(const std::uint8_t* in) {
  FrameHeader h;
  h.magic = get_le<std::uint32_t>(in + 0);
  h.version = get_le<std::uint16_t>(in + 4);
  h.kind = static_cast<FrameKind>(get_le<std::uint16_t>(in + 6));
  h.job_token = get_le<std::uint64_t>(in + 8);
  h.tag.comm = get_le<std::uint32_t>(in + 16);
  h.tag.step = get_le<std::uint32_t>(in + 20);
  h.tag.seq = get_le<std::uint64_t>(in + 24);
  h.length = get_le<std::uint64_t>(in + 32);
  h.arg = get_le<std::uint64_t>(in + 40);
  h.tag.sig = get_le<std::uint64_t>(in + 48);
  const std::uint64_t last = get_le<std::uint64_t>(in + 56);
  if (h.kind == FrameKind::kDesync) h.peer_sig = last;
  else h.progress = last;
  return h;
}

Status validate_frame(const FrameHeader& h, std::uint64_t job_token, std::uint64_t max_eager) {
  if (h.magic != kFrameMagic)
    return Status(ErrorCode::kIo, str_printf("bad frame magic 0x%08x (expected 0x%08x)", h.magic,
                                             kFrameMagic));
  if (h.version != kWireVersion)
    return Status(ErrorCode::kIo, str_printf("unsupported wire version %u (expected %u)",
                                             unsigned{h.version}, unsigned{kWireVersion}));
  if (h.job_token != job_token)
    return Status(ErrorCode::kIo,
                  str_printf("frame from another job (token %llx, expected %llx)",
                             static_cast<unsigned long long>(h.job_token),
                             static_cast<unsigned long long>(job_token)));
  std::uint64_t limit = 0;
  switch (h.kind) {
    case FrameKind::kHello:
    case FrameKind::kCts:
    case FrameKind::kCancel:
    case FrameKind::kDesync:
    case FrameKind::kBye: limit = 0; break;
    case FrameKind::kEager: limit = max_eager; break;
    case FrameKind::kAbort: {
      const auto code = static_cast<std::uint32_t>(h.arg);
      if (code <= static_cast<std::uint32_t>(ErrorCode::kOk) ||
          code > static_cast<std::uint32_t>(ErrorCode::kInternal))
        return Status(ErrorCode::kIo, str_printf("abort frame with unknown error code %u", code));
      limit = kMaxAbortReasonBytes;
      break;
    }
    case FrameKind::kRts:
    case FrameKind::kData:
    case FrameKind::kNack:
    case FrameKind::kRtr:
    case FrameKind::kPut: limit = kMaxMessageBytes; break;
    default:
      return Status(ErrorCode::kIo, str_printf("unknown frame kind %u", unsigned(h.kind)));
  }
  if (h.length > limit)
    return Status(ErrorCode::kIo,
                  str_printf("%s frame length %llu exceeds the limit of %llu bytes%s",
                             frame_kind_name(h.kind), static_cast<unsigned long long>(h.length),
                             static_cast<unsigned long long>(limit),
                             h.kind == FrameKind::kEager ? " (do all ranks use the same eager size?)"
                                                         : ""));
  return Status::ok();
}

}  // namespace chorus::tcp
