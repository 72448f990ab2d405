// CommImpl: rendezvous, transport set-up, and the path of one collective to its algorithm.
#include "core/comm_impl.h"

#include <charconv>
#include <random>

#include "algo/signature.h"
#include "core/factory.h"
#include "diag/log.h"
#include "util/strings.h"

namespace chorus::core {

namespace {

constexpr std::uint32_t kP2pCommBit = 0x80000000u;

// Sender and receiver of a point-to-point message share one signature: its size.
std::uint64_t p2p_signature(std::size_t bytes) {
  return algo::make_signature(algo::CollKind::kSend, DataType::kUint8, bytes, ReduceOp::kSum,
                              false, 0, false);
}

std::uint64_t random_token() {
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd() ^ 0x9e3779b97f4a7c15ull;
}

bootstrap::Bytes to_bytes(const std::string& s) { return bootstrap::Bytes(s.begin(), s.end()); }
std::string to_string(const bootstrap::Bytes& b) { return std::string(b.begin(), b.end()); }

}  // namespace

CommImpl::CommImpl(int rank, int size, CommConfig cfg, algo::Selector selector)
    : rank_(rank), size_(size), cfg_(std::move(cfg)), selector_(std::move(selector)),
      send_seq_(size, 0), recv_seq_(size, 0) {}

CommImpl::~CommImpl() = default;

Result<std::unique_ptr<CommImpl>> CommImpl::create(int rank, int size,
                                                   std::shared_ptr<bootstrap::Store> store,
                                                   const CommConfig& cfg,
                                                   std::shared_ptr<void> keepalive) {
  if (size < 1) return invalid_argument(str_printf("size must be >= 1, got %d", size));
  if (rank < 0 || rank >= size)
    return invalid_argument(str_printf("rank must be in [0, %d), got %d", size, rank));
  if (!store) return invalid_argument("store must not be null");
  algo::SelectorConfig sel_cfg{cfg.small_bytes, cfg.algo};
  CHORUS_ASSIGN_OR_RETURN(algo::Selector selector, algo::Selector::create(sel_cfg));
  std::unique_ptr<CommImpl> comm(new CommImpl(rank, size, cfg, std::move(selector)));
  comm->store_ = store;
  comm->keepalive_ = std::move(keepalive);
  Deadline deadline = Deadline::after(cfg.connect_timeout);

  // Every rank counts its own inits on this store; ranks that create communicators in
  // the same order agree on the number, which names this communicator's keys.
  CHORUS_ASSIGN_OR_RETURN(std::int64_t generation,
                          store->add(str_printf("chorus/init/%d", rank), 1));
  comm->comm_id_ = static_cast<std::uint32_t>(generation - 1);
  auto comm_store = std::make_shared<bootstrap::PrefixStore>(
      store, str_printf("chorus/comm%u", comm->comm_id_));

  std::uint64_t token = 0;
  if (rank == 0) {
    token = random_token();
    CHORUS_RETURN_IF_ERROR(comm_store->set("token", to_bytes(std::to_string(token))));
  } else {
    CHORUS_ASSIGN_OR_RETURN(bootstrap::Bytes raw, comm_store->get("token", deadline));
    const std::string text = to_string(raw);
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), token);
    if (ec != std::errc() || end != text.data() + text.size())
      return Status(ErrorCode::kDesync, "the store holds a malformed job token '" + text +
                                            "' (is another job using the same store?)");
  }

  TransportRequest req{rank, size, token, cfg, deadline};
  auto exchange = [&](const std::string& key,
                      const std::string& mine) -> Result<std::vector<std::string>> {
    CHORUS_ASSIGN_OR_RETURN(auto all, bootstrap::store_all_gather(*comm_store, key, rank, size,
                                                                  to_bytes(mine), deadline));
    std::vector<std::string> out;
    for (const auto& b : all) out.push_back(to_string(b));
    return out;
  };
  CHORUS_ASSIGN_OR_RETURN(comm->transport_, create_transport(req, *store, exchange));
  CHORUS_LOG(INFO, Init, "comm %u: rank %d of %d ready (transport %s)", comm->comm_id_, rank, size,
             cfg.transport.c_str());
  return comm;
}

Status CommImpl::run(algo::CollKind kind, algo::CollArgs args) {
  const char* name = algo::to_string(kind);
  if (!failed_.is_ok())
    return failed_.with_context(str_printf("%s refused: the communicator failed earlier", name));
  const std::uint64_t seq = next_seq_++;
  args.comm = comm_id_;
  args.seq = seq;
  args.deadline = Deadline::after(cfg_.timeout);
  args.chunk_bytes = cfg_.chunk_bytes;
  const bool has_op = kind == algo::CollKind::kAllReduce || kind == algo::CollKind::kReduce ||
                      kind == algo::CollKind::kReduceScatter;
  const bool has_root = kind == algo::CollKind::kReduce || kind == algo::CollKind::kBroadcast ||
                        kind == algo::CollKind::kGather || kind == algo::CollKind::kScatter;
  args.sig = algo::make_signature(kind, args.dtype, args.count, args.op, has_op, args.root, has_root);
  const std::size_t bytes = args.count * dtype_size(args.dtype);
  algo::Choice choice = selector_.choose(kind, bytes, size_);
  CHORUS_LOG(DEBUG, Coll, "%s seq %llu count %zu %s algo %s", name,
             static_cast<unsigned long long>(seq), args.count, chorus::to_string(args.dtype),
             choice.name);
  Status s = choice.fn(*transport_, args);
  if (s.is_ok()) return s;
  failed_ = s.with_seq(static_cast<std::int64_t>(seq))
                .with_context(str_printf("rank %d in %s seq %llu (%s x %zu, algo %s)", rank_, name,
                                         static_cast<unsigned long long>(seq),
                                         chorus::to_string(args.dtype), args.count, choice.name));
  return failed_;
}

Status CommImpl::send(const void* buf, std::size_t bytes, int peer) {
  if (!failed_.is_ok()) return failed_.with_context("send refused: the communicator failed earlier");
  transport::Tag tag{comm_id_ | kP2pCommBit, send_seq_[peer]++, 0, p2p_signature(bytes)};
  Status s = transport::send(*transport_, peer, tag, buf, bytes, Deadline::after(cfg_.timeout));
  if (!s.is_ok())
    failed_ = s.with_peer(peer).with_context(str_printf(
        "rank %d in send #%llu to rank %d (%zu bytes)", rank_,
        static_cast<unsigned long long>(tag.seq), peer, bytes));
  return failed_;
}

Status CommImpl::recv(void* buf, std::size_t bytes, int peer) {
  if (!failed_.is_ok()) return failed_.with_context("recv refused: the communicator failed earlier");
  transport::Tag tag{comm_id_ | kP2pCommBit, recv_seq_[peer]++, 0, p2p_signature(bytes)};
  Status s = transport::recv(*transport_, peer, tag, buf, bytes, Deadline::after(cfg_.timeout));
  if (!s.is_ok())
    failed_ = s.with_peer(peer).with_context(str_printf(
        "rank %d in recv #%llu from rank %d (%zu bytes)", rank_,
        static_cast<unsigned long long>(tag.seq), peer, bytes));
  return failed_;
}

}  // namespace chorus::core
