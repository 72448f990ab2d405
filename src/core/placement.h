// Placement: where the host runs the ranks' processors changes what a cache-line hand-off
// costs (on this project's 2-vCPU guests 4-5x between a shared last-level cache and none,
// for seconds at a time; docs/PERFORMANCE.md, sessions 19-21), and with it which algorithm
// is fastest: windows and rings hand dirty lines across, single copy reads clean memory.
// The selector prices the cache-line figures of the cost model at a `scale` (1 = as the
// probe measured them); rank 0 watches the transport's hand-off figure and proposes a new
// scale, and every rank switches at the same operation.
//
// Agreement (PlacementAgreement): every rank stores its collective's seq + 1 in its shared
// word, then reads the common word, whenever it chooses an algorithm. Rank 0 proposes "scale k
// from seq S on" (S beyond every rank's word) as pending, then reads every rank's word
// again: if no rank has reached S it confirms, else it cancels. Both sides store before
// they load (sequentially consistent), so a rank that chooses for seq >= S either was
// seen by rank 0 (cancelled) or sees the proposal (and waits for its resolution while
// pending). Rank 0 proposes again only once every rank has chosen a seq >= the last S, so a
// common word (S, old scale, new scale, state) describes every seq a rank can still choose.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "transport/transport.h"

namespace chorus::core {

inline constexpr int kMaxPlacementScale = 16;

// What CHORUS_PLACEMENT asks for: follow the measurement (auto), never change (off), or a
// fixed scale from the first collective on.
struct PlacementPolicy {
  enum class Mode { kAuto, kOff, kFixed } mode = Mode::kAuto;
  int fixed_scale = 1;
};
// Parses "auto", "off" or an integer scale 1..16; false on anything else.
bool parse_placement(const std::string& text, PlacementPolicy& out);

// The scale rank 0 asks for, given the hand-off measured now and at best and the scale in
// force: apart when now >= 2.5x the best (the ratio, rounded, 2..16), back to 1 below 1.6x
// (between: keep). Unknown figures keep `current`.
int wanted_scale(const transport::HandOff& h, int current);

// What the selector prices with, agreed per collective as one code (1..63): the hand-off
// scale (1..kMaxPlacementScale) and whether every rank's buffers lie in memory its peers
// map (registered memory, transport::SharedWindows::mappable): then single copy moves
// bytes at memory speed (algo::CostParams::mapped_peers).
struct Pricing {
  static constexpr int kMappedBit = 32;  // above every scale
  int scale = 1;
  bool mapped = false;
  int code() const { return scale | (mapped ? kMappedBit : 0); }
  static Pricing of(int code) {
    const int scale = code & (kMappedBit - 1);
    return {scale < 1 ? 1 : scale, (code & kMappedBit) != 0};
  }
  bool operator==(const Pricing&) const = default;
};

class PlacementAgreement {
 public:
  // `rank_words`: every rank's shared word (index = rank); `common`: written by rank 0.
  PlacementAgreement(int rank, std::vector<std::atomic<std::uint64_t>*> rank_words,
                     std::atomic<std::uint64_t>* common);
  // When a collective's algorithm is chosen, in increasing `seq` order (program order;
  // a group's at its end, still in order). Rank 0 first proposes `wanted` (a value 1..63,
  // e.g. a Pricing code) when it differs from the value in force (0: no wish). Returns the
  // value every rank uses for `seq` (1 until a proposal). While a proposal covering `seq`
  // is pending it waits for rank 0 up to `timeout` (the clock is read only then), then
  // keeps the old value. `flag` is published with the rank's word (others_flagged()).
  int value_for(std::uint64_t seq, int wanted, std::chrono::milliseconds timeout,
                bool flag = false);
  // Whether every other rank published `flag` with its latest choice (rank 0 asks, to
  // form its wish).
  bool others_flagged() const;
  // Proposals rank 0 made and confirmed (tests, statistics).
  std::uint64_t confirmed() const { return confirmed_; }

 private:
  void propose(std::uint64_t seq, int wanted);

  int rank_;
  std::vector<std::atomic<std::uint64_t>*> words_;
  std::atomic<std::uint64_t>* common_;
  std::uint64_t confirmed_ = 0;
};

}  // namespace chorus::core
