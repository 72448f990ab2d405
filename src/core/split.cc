// Membership::split() and new_group(): sub-communicators of this one.
//
// Every rank's (color, key, list digest) goes round in one all_gather on this
// communicator, labelled "split" / "new_group", so the exchange has a seq number, the
// desync check and the failure path of any collective (a lost peer fails it with
// kPeerLost on every rank). The ranks of each color then build a communicator, ordered
// by (key, old rank), under keys unique to (this communicator, split number, color):
//   "<key prefix>chorus/comm<id>/split<k>/c<color>/"
// through Membership::derive(), so it gets its own init counter, comm id, job token and
// fresh connections (its own TCP mesh, or its own shm segment). Sharing this
// communicator's connections is a later optimisation.
#include <algorithm>
#include <cstdint>
#include <utility>

#include "core/comm_impl.h"
#include "core/membership.h"
#include "diag/log.h"
#include "util/strings.h"

namespace chorus::core {

namespace {

constexpr int kFields = 3;  // color, key, digest: one int64 each

// Nonzero digest of a new_group list (split() passes 0), so ranks can tell that they
// passed different lists, or that some called split() and others new_group().
std::int64_t list_digest(const std::vector<int>& ranks) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  auto mix = [&h](std::uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= 1099511628211ull;
    }
  };
  mix(ranks.size());
  for (int r : ranks) mix(static_cast<std::uint32_t>(r));
  return static_cast<std::int64_t>((h >> 1) | 1);
}

}  // namespace

Result<std::unique_ptr<Comm>> Membership::split(int color, int key) {
  if (color < Comm::kNoColor)
    return invalid_argument(str_printf(
        "color=%d is negative (pass a color >= 0, or kNoColor = -1 for \"not a member\")",
        color));
  return split_checked(color, key, 0, "split");
}

Result<std::unique_ptr<Comm>> Membership::new_group(const std::vector<int>& ranks) {
  const int size = comm_.size(), rank = comm_.rank();
  if (ranks.empty()) return invalid_argument("ranks is empty (a group needs at least one rank)");
  std::vector<int> position(size, -1);
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const int r = ranks[i];
    if (r < 0 || r >= size)
      return invalid_argument(
          str_printf("ranks[%zu]=%d is out of range [0, %d)", i, r, size));
    if (position[r] >= 0)
      return invalid_argument(
          str_printf("ranks[%zu]=%d is listed twice (also ranks[%d])", i, r, position[r]));
    position[r] = static_cast<int>(i);
  }
  const bool member = position[rank] >= 0;
  return split_checked(member ? 0 : Comm::kNoColor, member ? position[rank] : 0,
                       list_digest(ranks), "new_group");
}

Result<std::unique_ptr<Comm>> Membership::split_checked(int color, int key,
                                                       std::int64_t digest,
                                                       const char* label) {
  constexpr int kNoColor = Comm::kNoColor;
  const int size = comm_.size(), rank = comm_.rank();
  const std::uint32_t comm_id = comm_.comm_id();
  const unsigned k = splits_++;
  std::int64_t mine[kFields] = {color, key, digest};
  std::vector<std::int64_t> all(static_cast<std::size_t>(kFields) * size);
  op::CollArgs a;
  a.send = mine;
  a.recv = all.data();
  a.count = kFields;
  a.dtype = DataType::kInt64;
  CHORUS_RETURN_IF_ERROR(comm_.run(op::CollKind::kAllGather, a, label));

  // Every rank sees the same table, so every rank reaches the same verdict below.
  std::vector<std::pair<std::int64_t, int>> members;  // (key, old rank) of my color
  for (int r = 0; r < size; ++r) {
    const std::int64_t* e = &all[static_cast<std::size_t>(kFields) * r];
    if (e[2] != digest)
      return invalid_argument(str_printf(
          "%s on comm %u: rank %d and rank %d passed different arguments (every rank must "
          "call %s with the same rank list)",
          label, comm_id, r, rank, label));
    if (e[0] < kNoColor || e[0] > INT32_MAX || e[1] < INT32_MIN || e[1] > INT32_MAX)
      return internal_error(str_printf("%s on comm %u: rank %d sent color %lld key %lld", label,
                                       comm_id, r, static_cast<long long>(e[0]),
                                       static_cast<long long>(e[1])));
    if (color != kNoColor && e[0] == color) members.emplace_back(e[1], r);
  }
  if (color == kNoColor) return std::unique_ptr<Comm>();
  std::sort(members.begin(), members.end());
  const auto me = std::find_if(members.begin(), members.end(),
                               [rank](const auto& m) { return m.second == rank; });
  CHORUS_CHECK(me != members.end(), "split: this rank is missing from its own color");
  const int new_rank = static_cast<int>(me - members.begin());
  const int new_size = static_cast<int>(members.size());
  CHORUS_LOG(INFO, Init, "comm %u: %s %u: rank %d, color %d key %d -> rank %d of %d", comm_id,
             label, k, rank, color, key, new_rank, new_size);
  auto comm = derive(new_rank, new_size, str_printf("split%u/c%d", k, color));
  if (!comm.has_value())
    return comm.status().with_context(
        str_printf("rank %d: %s %u of comm %u (color %d): building the new communicator", rank,
                   label, k, comm_id, color));
  return comm;
}

}  // namespace chorus::core
