// The host probe's TCP figures (core/host_probe.cc): one loopback connection between two
// threads of this process, made with the socket library the TCP transport uses.
#pragma once

namespace chorus::core {

struct TcpFigures {
  double handoff_us = 0;  // half a round trip of a small message, both ends polling
  double stream_bw = 0;   // bytes per us of one stream (each end copying concurrently)
};

// Both figures, or zeros where a step failed (no loopback, a busy host where the two
// threads never ran at once): the caller keeps its defaults then. Bounded: each step
// gives up after a few milliseconds.
TcpFigures probe_tcp();

}  // namespace chorus::core
