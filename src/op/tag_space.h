// The tag space: how every message's transport::Tag {comm, seq, step} is allocated among
// the communicator's collectives, its point-to-point messages and the phases of composite
// algorithms. The one place that hands out bits of a tag; core and algo build tags with it.
#pragma once
#include <cstdint>

namespace chorus::op {

// --- comm (32 bits) -------------------------------------------------------------------
// A communicator's id (core: its init counter on the store) takes the low kCommIdBits;
// the bits above mark point-to-point messages.
inline constexpr int kCommIdBits = 30;
inline constexpr std::uint32_t kCommIdMask = (std::uint32_t{1} << kCommIdBits) - 1;
// Every point-to-point message (send/recv): never the comm of a collective.
inline constexpr std::uint32_t kP2pCommBit = 0x80000000u;
// With kP2pCommBit: a message of a user tag other than 0 (the tag is the step). Its own
// comm value keeps tag-0 receives and tagged messages apart in the overtaken check; tagged
// messages are also marked unordered, since tags of a pair advance independently.
inline constexpr std::uint32_t kP2pTaggedBit = 0x40000000u;
static_assert((kP2pCommBit & kP2pTaggedBit) == 0, "p2p comm bits overlap");
static_assert(((kP2pCommBit | kP2pTaggedBit) & kCommIdMask) == 0,
              "p2p comm bits overlap the communicator id");

// The comm of a point-to-point message of communicator `comm_id` (tagged: user tag != 0).
constexpr std::uint32_t p2p_comm(std::uint32_t comm_id, bool tagged) {
  return comm_id | kP2pCommBit | (tagged ? kP2pTaggedBit : 0u);
}

// --- seq (64 bits) --------------------------------------------------------------------
// Point-to-point messages carry their per-pair seq plus this base on the wire, so that a
// send/recv seq never equals a collective's seq: the shared-memory transport compares a
// waiting receive's seq with the seq of a peer's shared-window barrier (a collective) and
// would report a p2p receive waiting while a third rank sits in barrier seq N as a desync.
// Collective seqs stay below it.
inline constexpr std::uint64_t kP2pSeqBase = std::uint64_t{1} << 62;

// --- step (32 bits) -------------------------------------------------------------------
// Collectives: phase p (0 = the whole operation, 1..kMaxPhase) of a composite algorithm
// (hier*.cc) takes the steps from p << kPhaseStepShift, so phases never exchange
// messages; a phase uses fewer than 2^28 steps (a ring over 2048 ranks of 65536 chunks
// each). Point-to-point: the step is the user's tag (>= 0).
inline constexpr int kPhaseStepShift = 28;
inline constexpr std::uint32_t kMaxPhase = 3;
static_assert(kMaxPhase < (std::uint32_t{1} << (32 - kPhaseStepShift)),
              "phase step ranges overflow the 32-bit step");

// The step base of phase `p` of an operation whose steps start at `base`.
constexpr std::uint32_t phase_step_base(std::uint32_t base, std::uint32_t p) {
  return base + (p << kPhaseStepShift);
}

}  // namespace chorus::op
