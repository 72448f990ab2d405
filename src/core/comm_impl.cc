// CommImpl: rendezvous, transport set-up, teardown, abort, and fail(): a failing
// operation recorded in the failure state and told to the peers.
#include "core/comm_impl.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <random>

#include "core/factory.h"
#include "core/live_comms.h"
#include "core/membership.h"
#include "core/tuning.h"
#include "diag/log.h"
#include "util/strings.h"

namespace chorus::core {

namespace {

std::uint64_t random_token() {
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd() ^ 0x9e3779b97f4a7c15ull;
}

// Failures that leave peers waiting on this rank: the transport tells them at once.
bool propagates(ErrorCode code) {
  return code == ErrorCode::kPeerLost || code == ErrorCode::kTimeout ||
         code == ErrorCode::kDesync || code == ErrorCode::kIo || code == ErrorCode::kInternal;
}

bootstrap::Bytes to_bytes(const std::string& s) { return bootstrap::Bytes(s.begin(), s.end()); }
std::string to_string(const bootstrap::Bytes& b) { return std::string(b.begin(), b.end()); }

}  // namespace

CommImpl::CommImpl(int rank, int size, CommConfig cfg, algo::Selector selector)
    : rank_(rank), size_(size), cfg_(std::move(cfg)), selector_(std::move(selector)),
      p2p_seqs_(size), failure_(rank) {
  streams_.push_back(std::make_unique<StreamQueue>(0, "default"));
  any_stream_ = std::make_unique<StreamQueue>(-1, "any_source");
}

CommImpl::~CommImpl() {
  live_comms_remove(this);
  // Pending work cannot finish without this communicator: abort it (the peers learn),
  // which fails it promptly, then let the workers drain their queues and stop.
  // Issued and not finished (queued, running, or recorded in an open group); an operation
  // whose Work already completed does not count, even while its callbacks still run.
  const auto pending = static_cast<std::size_t>(std::max<std::int64_t>(0, inflight_.load()));
  if (pending > 0) {
    CHORUS_LOG(WARN, Coll, "comm %u: rank %d: communicator destroyed with %zu operations "
               "pending; aborting them", comm_id_, rank_, pending);
    abort_with(Status(ErrorCode::kAborted,
                      str_printf("rank %d destroyed its communicator with %zu operations pending",
                                 rank_, pending)));
  }
  for (const auto& q : streams_) q->stop();
  any_stream_->stop();  // after the streams, which hand it receives from any source
  if (p2p_waiter_) p2p_waiter_->stop();  // what is left fails promptly (aborted above)
  for (auto& p : group_) {
    Status s = drop(p->op, failure_.refuse(p->op.name, p->op.seq()));
    if (p->work) p->work->complete(std::move(s));
  }
  group_.clear();
  if (observe_ && comm_store_) observe_->finish(*comm_store_, kStatsBudget);
  // Leave a line for the hang report of ranks that still need this one ("exited after
  // seq N"), before the transport closes and they notice.
  if (comm_store_ && diag_.hang_report != HangReportMode::kNone && !failure_.set_reported()) {
    exchange_hang_lines(comm_store_, comm_id_,
                        own_line(failure_.aborted() ? "aborted" : "exited", ""), {}, -1, false,
                        false, kHangReportBudget);
  }
}

void CommImpl::abort() {
  abort_with(Status(ErrorCode::kAborted, str_printf("abort() was called on rank %d", rank_)));
}

void CommImpl::abort_with(const Status& reason) {
  if (failure_.set_aborted()) return;
  CHORUS_LOG(WARN, Coll, "comm %u: rank %d: aborting: %s", comm_id_, rank_,
             reason.message().c_str());
  tickets_.stop();  // operations waiting for their window turn give up
  if (transport_) transport_->abort(reason);
}

void Comm::abort_all() {
  live_comms_for_each([](CommImpl& c) { c.abort(); });
}

Status CommImpl::fail(const Status& s, const std::string& context, std::uint64_t rec) {
  Status mine = s.with_context(context);
  const int peer = mine.peer();
  // Once per message: a report forwarded by another rank already carries its view.
  if (s.code() == ErrorCode::kPeerLost && peer >= 0 && peer < size_ && peer != rank_ &&
      mine.message().find(" was lost; ") == std::string::npos)
    mine = Status(mine.code(), mine.message() + " (" + lost_rank_text(peer) + ")", peer,
                  mine.seq());
  recorder_->failed(rec, mine.message());
  // A first failure by timeout: report_failure() asks which ranks are still alive, and
  // every error of this communicator waits for the answer (FailureState::name_stalled()).
  failure_.record(mine, s.code() == ErrorCode::kTimeout && size_ > 1 && comm_store_ &&
                            diag_.hang_report != HangReportMode::kNone);
  tickets_.stop();  // the communicator is unusable: nobody waits for a window turn
  if (!propagates(s.code())) return mine;
  transport_->abort(mine);  // first: the peers learn now and answer the liveness question
  report_failure();
  return s.code() == ErrorCode::kTimeout ? failure_.name_stalled(mine) : mine;
}

Result<bool> CommImpl::agree(bool flag) {
  if (in_group())
    return invalid_argument("agree() is not allowed between group_start() and group_end()");
  std::uint8_t in = flag ? 1 : 0, out = 0;
  op::CollArgs a;
  a.send = &in;
  a.recv = &out;
  a.count = 1;
  a.dtype = DataType::kUint8;
  a.op = ReduceOp::kMax;
  CHORUS_RETURN_IF_ERROR(run(op::CollKind::kAllReduce, a, "agree"));
  return out != 0;
}

Result<std::unique_ptr<CommImpl>> CommImpl::create(int rank, int size,
                                                   std::shared_ptr<bootstrap::Store> store,
                                                   const CommConfig& cfg,
                                                   std::shared_ptr<void> keepalive,
                                                   const std::string& key_prefix) {
  if (size < 1) return invalid_argument(str_printf("size must be >= 1, got %d", size));
  if (rank < 0 || rank >= size)
    return invalid_argument(str_printf("rank must be in [0, %d), got %d", size, rank));
  if (!store) return invalid_argument("store must not be null");
  algo::SelectorConfig sel_cfg;
  sel_cfg.small_bytes = cfg.small_bytes;
  sel_cfg.override_spec = cfg.algo;
  sel_cfg.model_spec = cfg.cost_model;
  // Checks CHORUS_ALGO and CHORUS_COST_MODEL before any rendezvous; rebuilt below with
  // the agreed tuning.
  CHORUS_ASSIGN_OR_RETURN(algo::Selector selector, algo::Selector::create(sel_cfg));
  std::unique_ptr<CommImpl> comm(new CommImpl(rank, size, cfg, std::move(selector)));
  comm->members_ =
      std::make_unique<Membership>(*comm, store, std::move(keepalive), key_prefix, cfg);
  Deadline deadline = Deadline::after(cfg.connect_timeout);

  // Every rank counts its own inits on this store; ranks that create communicators in
  // the same order agree on the number, which names this communicator's keys.
  CHORUS_ASSIGN_OR_RETURN(std::int64_t generation,
                          store->add(key_prefix + str_printf("chorus/init/%d", rank), 1));
  comm->comm_id_ = static_cast<std::uint32_t>(generation - 1);
  auto comm_store = std::make_shared<bootstrap::PrefixStore>(
      store, key_prefix + str_printf("chorus/comm%u", comm->comm_id_));
  comm->comm_store_ = comm_store;
  comm->diag_ = diag_settings(cfg);
  diag::log_adopt_rank(rank);  // "[rank r]" in log lines, %r in CHORUS_DEBUG_FILE
  comm->recorder_ = std::make_unique<diag::FlightRecorder>(comm->diag_.recorder_size,
                                                           comm->comm_id_, rank, size);

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

  // Every rank chooses with rank 0's tuning (the host's measured cost model, the table).
  CHORUS_ASSIGN_OR_RETURN(Tuning tuning, agree_tuning(rank, size, *comm_store, cfg.tuning_file,
                                                      cfg.tuning_table, deadline));
  sel_cfg.cost = tuning.cost;
  sel_cfg.table = std::move(tuning.table);

  TransportRequest req{rank, size, token, cfg, deadline};
  auto exchange = [&](const std::string& key, const std::string& mine, int group_rank,
                      int group_size) -> Result<std::vector<std::string>> {
    CHORUS_ASSIGN_OR_RETURN(auto all,
                            bootstrap::store_all_gather(*comm_store, key, group_rank, group_size,
                                                        to_bytes(mine), deadline));
    std::vector<std::string> out;
    for (const auto& b : all) out.push_back(to_string(b));
    return out;
  };
  CHORUS_ASSIGN_OR_RETURN(comm->transport_, create_transport(req, *store, exchange));
  comm->caps_ = algo::capabilities_of(*comm->transport_);
  if (const transport::SharedWindows* w = comm->transport_->shared_windows())
    sel_cfg.cost.window_half = static_cast<double>(w->window_bytes() / 2);
  sel_cfg.cost.chunk_bytes = static_cast<double>(cfg.chunk_bytes);
  sel_cfg.cost.ring_quarter = static_cast<double>(cfg.buff_bytes / 4);
  CHORUS_ASSIGN_OR_RETURN(comm->selector_, algo::Selector::create(sel_cfg));
  comm->sel_cfg_ = sel_cfg;
  comm->start_placement();
  comm->p2p_waiter_ = std::make_unique<P2pWaiter>(*comm->transport_);
  // Who runs each rank, for kPeerLost messages and the hang report.
  CHORUS_ASSIGN_OR_RETURN(auto idents,
                          exchange("ident",
                                   str_printf("%s %ld", diag::this_host().c_str(),
                                              static_cast<long>(::getpid())),
                                   rank, size));
  comm->hosts_.assign(size, "");
  comm->pids_.assign(size, -1);
  for (int r = 0; r < size; ++r) {
    const auto parts = str_split(idents[r], ' ');
    auto pid = parts.size() == 2 ? parse_int(parts[1]) : std::nullopt;
    if (!pid) continue;
    comm->hosts_[r] = parts[0];
    comm->pids_[r] = static_cast<long>(*pid);
  }
  CHORUS_RETURN_IF_ERROR(comm->start_observing());
  live_comms_add(comm.get());
  CHORUS_LOG(INFO, Init, "comm %u: rank %d of %d ready (transport %s)", comm->comm_id_, rank, size,
             config::name_of(cfg.transport));
  return comm;
}

Result<std::unique_ptr<Comm>> create_comm(int rank, int size,
                                          std::shared_ptr<bootstrap::Store> store,
                                          const CommConfig& cfg, std::shared_ptr<void> keepalive,
                                          const std::string& key_prefix) {
  CHORUS_ASSIGN_OR_RETURN(std::unique_ptr<CommImpl> comm,
                          CommImpl::create(rank, size, std::move(store), cfg,
                                           std::move(keepalive), key_prefix));
  return std::unique_ptr<Comm>(std::move(comm));
}

}  // namespace chorus::core
