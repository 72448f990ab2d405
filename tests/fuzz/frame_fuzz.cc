// libFuzzer target for everything Chorus parses from the network (see tests/fuzz/README
// in README.md, "Fuzzing"). The first input byte picks the parser, the rest is its input:
//   0: TCP frame header: decode_frame + validate_frame; a valid header must re-encode to
//      the same bytes and respect its kind's length limit.
//   1: TCP hello (mesh set-up): check_hello_bytes for a rank/size taken from the input; an
//      accepted hello must name a higher rank of the world.
//   2: TCP store protocol (bootstrap): parse_header + parse_request; an accepted request
//      must re-encode and re-parse to the same request.
//   3: the TCP engine's per-peer byte stream after set-up: a 2-rank engine whose peer
//      socket (a socketpair) delivers the input and then EOF, with receives and sends
//      posted (eager and rendezvous); wait() must return (never time out) once EOF is in.
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bootstrap/store_protocol.h"
#include "diag/log.h"
#include "transport/tcp/engine.h"
#include "transport/tcp/frame.h"
#include "transport/tcp/handshake.h"

using namespace chorus;
using namespace chorus::tcp;

namespace {

constexpr std::uint64_t kToken = 0xC0FFEE1234ull;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

void fuzz_frame(const std::uint8_t* data, std::size_t size) {
  std::uint8_t hdr[kFrameHeaderBytes] = {};
  std::memcpy(hdr, data, std::min(size, kFrameHeaderBytes));
  FrameHeader h = decode_frame(hdr);
  (void)frame_kind_name(h.kind);
  for (std::uint64_t max_eager : {std::uint64_t{0}, std::uint64_t{64}, std::uint64_t{64} << 10}) {
    Status st = validate_frame(h, kToken, max_eager);
    if (!st.is_ok()) {
      check(st.code() == ErrorCode::kIo && !st.message().empty());
      continue;
    }
    check(h.magic == kFrameMagic && h.version == kWireVersion && h.job_token == kToken);
    check(h.length <= kMaxMessageBytes);
    if (h.kind == FrameKind::kEager) check(h.length <= max_eager);
    if (h.kind == FrameKind::kAbort) check(h.length <= kMaxAbortReasonBytes);
    std::uint8_t again[kFrameHeaderBytes];
    encode_frame(h, again);
    check(std::memcmp(again, hdr, kFrameHeaderBytes) == 0);
  }
}

void fuzz_hello(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return;
  const int world = 1 + data[0] % 16;
  const int rank = data[1] % world;
  std::uint8_t hdr[kFrameHeaderBytes] = {};
  std::memcpy(hdr, data + 2, std::min(size - 2, kFrameHeaderBytes));
  auto r = check_hello_bytes(hdr, kToken, rank, world);
  if (r.has_value()) check(*r > rank && *r < world);
  else check(r.status().code() == ErrorCode::kIo);
}

void fuzz_store(const std::uint8_t* data, std::size_t size) {
  namespace proto = bootstrap::proto;
  if (size < proto::kHeaderSize) return;
  auto h = proto::parse_header(data);
  if (!h.has_value()) return;
  check(h->body_len <= proto::kMaxBody);
  if (h->body_len > size - proto::kHeaderSize) return;  // the server would wait for more
  auto req = proto::parse_request(*h, data + proto::kHeaderSize);
  if (!req.has_value()) return;
  bootstrap::Bytes frame = proto::encode_request(*req);
  check(frame.size() >= proto::kHeaderSize);
  auto h2 = proto::parse_header(frame.data());
  check(h2.has_value() && h2->body_len == frame.size() - proto::kHeaderSize);
  auto req2 = proto::parse_request(*h2, frame.data() + proto::kHeaderSize);
  check(req2.has_value() && req2->op == req->op && req2->keys == req->keys &&
        req2->value == req->value && req2->delta == req->delta);
}

void fuzz_engine(const std::uint8_t* data, std::size_t size) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) std::abort();
  int buf = 1 << 20;
  ::setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
  ::setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
  // The whole input is queued before the engine starts, then EOF.
  for (std::size_t off = 0; off < size;) {
    ssize_t n = ::send(sv[1], data + off, size - off, MSG_NOSIGNAL);
    if (n <= 0) break;  // larger than the socket buffer: fuzz what fits
    off += static_cast<std::size_t>(n);
  }
  ::shutdown(sv[1], SHUT_WR);
  ::fcntl(sv[0], F_SETFL, O_NONBLOCK);

  TcpOptions opts;
  opts.rank = 0;
  opts.size = 2;
  opts.job_token = kToken;
  opts.eager_bytes = 64;
  Mesh mesh;
  mesh.fds.resize(2);
  mesh.fds[1] = UniqueFd(sv[0]);
  mesh.addresses = {"self", "fuzz-peer"};
  {
    Engine engine(opts, std::move(mesh));
    std::vector<std::uint8_t> small_in(16), big_in(256), small_out(16, 0x5a), big_out(256, 0xa5);
    Op ops[5];
    auto set = [](Op& op, Op::Kind kind, std::uint64_t seq, std::size_t bytes) {
      op.kind = kind;
      op.peer = 1;
      op.tag = transport::Tag{1, seq, 0, 0};
      op.bytes = bytes;
    };
    set(ops[0], Op::Kind::kRecv, 1, small_in.size());
    ops[0].recv_data = small_in.data();
    set(ops[1], Op::Kind::kRecv, 2, big_in.size());  // rendezvous: answers an RTS with a CTS
    ops[1].recv_data = big_in.data();
    set(ops[2], Op::Kind::kSend, 3, big_out.size());  // rendezvous: RTS out, waits for CTS
    ops[2].send_data = big_out.data();
    set(ops[3], Op::Kind::kSend, 4, small_out.size());
    ops[3].send_data = small_out.data();
    set(ops[4], Op::Kind::kRecv, 5, 0);  // zero-byte receive
    ops[4].recv_data = small_in.data();
    Op* ptrs[5];
    for (int i = 0; i < 5; ++i) {
      ptrs[i] = &ops[i];
      (void)engine.post(&ops[i]);
    }
    // EOF is already queued: every op completes or fails (or the engine aborts, after which
    // wait() reports the abort and pending ops are left to cancel/close) long before the
    // deadline. A timeout would be a silent hang.
    // wait() returns at the first failed op without driving progress, so each round waits
    // only for the ops still pending (a failed receive must not hide a send that the EOF
    // still has to fail).
    bool all_done = false;
    for (int round = 0; round < 5 && !all_done && !engine.aborted(); ++round) {
      std::vector<Op*> pending;
      for (Op* op : ptrs)
        if (!op->done.load()) pending.push_back(op);
      Status st = engine.wait(pending, Deadline::after(std::chrono::seconds(5)));
      check(st.code() != ErrorCode::kTimeout || engine.aborted());  // a peer may report one
      all_done = true;
      for (Op* op : ptrs) all_done = all_done && op->done.load();
    }
    if (std::getenv("CHORUS_FUZZ_LOG") != nullptr)
      for (Op* op : ptrs)
        std::fprintf(stderr, "op seq %llu done %d: %s\n", static_cast<unsigned long long>(op->tag.seq),
                     int{op->done.load()}, op->status.to_string().c_str());
    check(all_done || engine.aborted());
    for (Op* op : ptrs) engine.cancel(op);
    engine.close();
  }
  ::close(sv[1]);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* level = std::getenv("CHORUS_FUZZ_LOG");  // e.g. TRACE when reproducing a crash
  const auto parsed = config::parse_enum<config::LogLevel>(level != nullptr ? level : "NONE");
  diag::log_configure(parsed.value_or(config::LogLevel::kNone), config::kAllSubsys, "");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  switch (data[0] % 4) {
    case 0: fuzz_frame(data + 1, size - 1); break;
    case 1: fuzz_hello(data + 1, size - 1); break;
    case 2: fuzz_store(data + 1, size - 1); break;
    case 3: fuzz_engine(data + 1, size - 1); break;
  }
  return 0;
}
