// The host probe: measures the cost model's parameters (algo/cost_model.h) on this
// machine in a few tens of milliseconds, and names the machine for the per-host cache.
#pragma once
#include <string>

#include "algo/cost_model.h"

namespace chorus::core {

// Copy and reduction bandwidth in and out of cache, process_vm_readv bandwidth and cost
// per call, a cross-core flag hand-off and a futex wake-up between two threads (the same
// cache lines and system calls as between two processes), and a TCP message hand-off and
// stream rate over loopback (core/host_probe_tcp.h). Figures it cannot measure
// (one processor: no hand-off; no process_vm_readv) keep their defaults. Thread-safe.
// `steps`, when given, receives the time of each step ("copy 3.1 ms, ...").
algo::CostParams probe_host(std::string* steps = nullptr);

// "CPU model|processors|kernel release": what the tuning cache is keyed by.
std::string host_key();

}  // namespace chorus::core
