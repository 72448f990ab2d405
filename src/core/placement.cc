#include "core/placement.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <thread>

#include "util/deadline.h"
#include "util/spin_lock.h"
#include "util/strings.h"

namespace chorus::core {
namespace {

// The common word: S (bits 0-47), old value (48-53), new value (54-59), state (60-61).
// Value 0 stands for 1 (the word starts at zero).
enum State : std::uint64_t { kConfirmed = 0, kPending = 1, kCancelled = 2 };
constexpr std::uint64_t kSeqMask = (1ull << 48) - 1;
// A rank's word: its chosen seq + 1 (bits 0-62) and its flag (bit 63).
constexpr std::uint64_t kFlag = 1ull << 63;
// How far beyond every rank's issued count a switch lands: room for the ranks that issue
// while rank 0 checks, so that proposals are seldom cancelled.
constexpr std::uint64_t kLead = 4;

struct Word {
  std::uint64_t from;
  int old_scale, new_scale;
  std::uint64_t state;
};
Word decode(std::uint64_t w) {
  auto scale = [](std::uint64_t v) { return v == 0 ? 1 : static_cast<int>(v); };
  return {w & kSeqMask, scale((w >> 48) & 63), scale((w >> 54) & 63), (w >> 60) & 3};
}
std::uint64_t encode(std::uint64_t from, int old_scale, int new_scale, std::uint64_t state) {
  return (from & kSeqMask) | static_cast<std::uint64_t>(old_scale) << 48 |
         static_cast<std::uint64_t>(new_scale) << 54 | state << 60;
}
// The scale in force for every seq from the word's S on (and for any seq once resolved).
int settled(const Word& w) { return w.state == kConfirmed ? w.new_scale : w.old_scale; }

}  // namespace

bool parse_placement(const std::string& text, PlacementPolicy& out) {
  if (text == "auto" || text.empty()) {
    out = PlacementPolicy{};
    return true;
  }
  if (text == "off") {
    out = PlacementPolicy{PlacementPolicy::Mode::kOff, 1};
    return true;
  }
  const auto v = parse_int(text);
  if (!v || *v < 1 || *v > kMaxPlacementScale) return false;
  out = PlacementPolicy{PlacementPolicy::Mode::kFixed, static_cast<int>(*v)};
  return true;
}

int wanted_scale(const transport::HandOff& h, int current) {
  if (h.now_ns <= 0 || h.floor_ns <= 0) return current;
  const double ratio = h.now_ns / h.floor_ns;
  if (current == 1)
    return ratio >= 2.5 ? std::clamp(static_cast<int>(std::lround(ratio)), 2, kMaxPlacementScale)
                        : 1;
  return ratio < 1.6 ? 1 : current;
}

PlacementAgreement::PlacementAgreement(int rank, std::vector<std::atomic<std::uint64_t>*> rank_words,
                                       std::atomic<std::uint64_t>* common)
    : rank_(rank), words_(std::move(rank_words)), common_(common) {}

bool PlacementAgreement::others_flagged() const {
  for (std::size_t r = 0; r < words_.size(); ++r)
    if (static_cast<int>(r) != rank_ && (words_[r]->load(std::memory_order_relaxed) & kFlag) == 0)
      return false;
  return true;
}

int PlacementAgreement::value_for(std::uint64_t seq, int wanted,
                                  std::chrono::milliseconds timeout, bool flag) {
  words_[rank_]->store((seq + 1) | (flag ? kFlag : 0), std::memory_order_seq_cst);
  if (rank_ == 0) {
    propose(seq, wanted);
    const Word w = decode(common_->load(std::memory_order_relaxed));
    return seq >= w.from ? settled(w) : w.old_scale;
  }
  std::optional<Deadline> deadline;  // from the first look at a pending proposal
  for (unsigned spins = 0;; ++spins) {
    const Word w = decode(common_->load(std::memory_order_seq_cst));
    if (seq < w.from) return w.old_scale;
    if (w.state != kPending) return settled(w);
    // Rank 0 is between its proposal and its check (a few loads): wait, bounded.
    if (!deadline) deadline = Deadline::after(timeout);
    if (spins % 64 == 63) {
      if (deadline->expired()) return w.old_scale;
      std::this_thread::yield();
    } else {
      util::cpu_pause();
    }
  }
}

void PlacementAgreement::propose(std::uint64_t seq, int wanted) {
  const Word w = decode(common_->load(std::memory_order_relaxed));
  const int current = settled(w);
  if (wanted <= 0 || wanted == current) return;
  std::uint64_t ahead = seq + 1;
  for (std::atomic<std::uint64_t>* word : words_) {
    const std::uint64_t n = word->load(std::memory_order_seq_cst) & ~kFlag;
    // A rank that has not yet chosen a seq at or past the last switch (n - 1 >= S) could
    // still choose one below it, which the new word would describe with the wrong scale
    // (it may be doing so now: its word is stored before it reads the common one). Wait
    // for it: propose at a later choice.
    if (w.state == kConfirmed && n <= w.from) return;
    ahead = std::max(ahead, n);
  }
  const std::uint64_t from = ahead + kLead;
  common_->store(encode(from, current, wanted, kPending), std::memory_order_seq_cst);
  bool clear = true;
  for (std::atomic<std::uint64_t>* word : words_)
    clear = clear && (word->load(std::memory_order_seq_cst) & ~kFlag) <= from;
  common_->store(encode(from, current, wanted, clear ? kConfirmed : kCancelled),
                 std::memory_order_seq_cst);
  if (clear) ++confirmed_;
}

}  // namespace chorus::core
