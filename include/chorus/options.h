// Per-communicator options. Zero / empty fields take their value from the
// environment (CHORUS_* variables, see docs/CONFIG.md).
#pragma once
#include <chrono>
#include <string>

namespace chorus {

struct Options {
  // Deadline for every operation (collective, send, recv). 0 = CHORUS_TIMEOUT.
  std::chrono::milliseconds timeout{0};
  // Deadline for rendezvous and connection set-up. 0 = CHORUS_CONNECT_TIMEOUT.
  std::chrono::milliseconds connect_timeout{0};
  // Algorithm override, same syntax as CHORUS_ALGO. Empty = CHORUS_ALGO / automatic.
  std::string algo;
  // Collect per-operation statistics (Communicator::stats()) even without CHORUS_STATS=1.
  bool stats = false;
};

}  // namespace chorus
