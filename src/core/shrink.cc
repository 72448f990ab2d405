// Membership::shrink(): the surviving ranks agree, through the store only (the data path
// may be broken), on who is alive, and build a new communicator of them.
//
// Keys, under this communicator's store prefix "chorus/comm<k>/shrink<n>/" (n = this
// rank's count of shrink() calls on this communicator):
//   lost/<r>   published by every caller for each peer it saw fail with kPeerLost;
//   alive/<r>  published by every caller (after its lost/ keys);
//   leader     a counter: the first caller to add() it decides;
//   members    the decision, "0,1,3": the old ranks of the new communicator, in order.
// The leader polls until every old rank is alive or lost (a caller publishes lost/
// before alive/, so once all non-lost ranks are alive no lost/ key is missing) or until
// connect_timeout passes, then publishes the members. The others wait for that list
// (connect_timeout + 2 s: the leader may have started its window a little earlier). The
// new communicator's keys nest under "chorus/comm<k>/shrink<n>/", so its init counter,
// comm id, token and connections are fresh.
#include <algorithm>
#include <thread>

#include "core/comm_impl.h"
#include "core/membership.h"
#include "diag/log.h"
#include "util/strings.h"

namespace chorus::core {

namespace {

constexpr std::chrono::milliseconds kPoll{10};
constexpr std::chrono::milliseconds kMemberListGrace{2000};

const bootstrap::Bytes kOne{'1'};

std::string join(const std::vector<int>& v) {
  std::string out;
  for (int x : v) out += (out.empty() ? "" : ",") + std::to_string(x);
  return out;
}

// The leader's wait: every rank alive or known lost, or the window passed.
Result<std::vector<int>> decide(bootstrap::Store& st, int size, Deadline window) {
  enum { kUnknown, kAlive, kLost };
  std::vector<int> state(size, kUnknown);
  for (;;) {
    bool resolved = true;
    for (int r = 0; r < size; ++r) {
      if (state[r] == kAlive) continue;
      CHORUS_ASSIGN_OR_RETURN(bool alive, st.check(str_printf("alive/%d", r)));
      if (alive) {
        state[r] = kAlive;
        continue;
      }
      if (state[r] == kUnknown) {
        CHORUS_ASSIGN_OR_RETURN(bool lost, st.check(str_printf("lost/%d", r)));
        if (lost) state[r] = kLost;
      }
      if (state[r] == kUnknown) resolved = false;
    }
    if (resolved || window.expired()) break;
    std::this_thread::sleep_for(kPoll);
  }
  std::vector<int> members;
  for (int r = 0; r < size; ++r)
    if (state[r] == kAlive) members.push_back(r);
  return members;
}

Result<std::vector<int>> parse_members(const std::string& text, int size) {
  std::vector<int> out;
  for (const auto& part : str_split(text, ',')) {
    auto v = parse_int(part);
    if (!v || *v < 0 || *v >= size || (!out.empty() && *v <= out.back()))
      return Status(ErrorCode::kInternal, "malformed shrink member list '" + text + "'");
    out.push_back(static_cast<int>(*v));
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<Comm>> Membership::shrink() {
  const int rank = comm_.rank(), size = comm_.size();
  const std::uint32_t comm_id = comm_.comm_id();
  const unsigned attempt = shrink_attempts_++;
  const std::string prefix = str_printf("shrink%u", attempt);
  const std::string what =
      str_printf("rank %d: shrink of comm %u (attempt %u)", rank, comm_id, attempt);
  // Whatever happens below, the old communicator is finished: nothing may wait on it.
  struct AbortOld {
    CommImpl& c;
    ~AbortOld() {
      if (c.failure().first_failure().is_ok()) c.abort();
    }
  } abort_old{comm_};

  bootstrap::PrefixStore st(comm_.comm_store(), prefix);
  const Deadline window = Deadline::after(cfg_.connect_timeout);
  const Status failure = comm_.failure().first_failure();
  const int lost = failure.code() == ErrorCode::kPeerLost ? failure.peer() : -1;
  if (lost >= 0 && lost < size && lost != rank)
    CHORUS_RETURN_IF_ERROR(st.set(str_printf("lost/%d", lost), kOne).with_context(what));
  CHORUS_RETURN_IF_ERROR(st.set(str_printf("alive/%d", rank), kOne).with_context(what));
  auto leader = st.add("leader", 1);
  if (!leader.has_value()) return leader.status().with_context(what);

  std::vector<int> members;
  if (*leader == 1) {
    auto decided = decide(st, size, window);
    if (!decided.has_value()) return decided.status().with_context(what);
    members = std::move(*decided);
    const std::string text = join(members);
    CHORUS_RETURN_IF_ERROR(
        st.set("members", bootstrap::Bytes(text.begin(), text.end())).with_context(what));
  } else {
    auto raw = st.get("members", Deadline::after(cfg_.connect_timeout + kMemberListGrace));
    if (!raw.has_value()) {
      if (raw.status().code() != ErrorCode::kTimeout) return raw.status().with_context(what);
      return Status(ErrorCode::kTimeout,
                    what + ": no member list from the deciding rank within " +
                        std::to_string((cfg_.connect_timeout + kMemberListGrace).count()) +
                        " ms (did it die during shrink?)");
    }
    auto parsed = parse_members(std::string(raw->begin(), raw->end()), size);
    if (!parsed.has_value()) return parsed.status().with_context(what);
    members = std::move(*parsed);
  }
  const auto me = std::find(members.begin(), members.end(), rank);
  if (me == members.end())
    return Status(ErrorCode::kPeerLost,
                  what + ": this rank is not a member of the new communicator (members: old "
                         "ranks " + join(members) + "; it called shrink() after they decided)");
  const int new_rank = static_cast<int>(me - members.begin());
  CHORUS_LOG(WARN, Init, "comm %u: shrink: old rank %d of %d -> rank %d of %d (old ranks %s)",
             comm_id, rank, size, new_rank, static_cast<int>(members.size()),
             join(members).c_str());

  auto comm = derive(new_rank, static_cast<int>(members.size()), prefix);
  if (!comm.has_value()) return comm.status().with_context(what + ": building the new communicator");
  return comm;
}

}  // namespace chorus::core
