// The host probe: measures the cost model's parameters (algo/cost_model.h) on this
// machine in a few tens of milliseconds, and names the machine for the per-host cache.
#pragma once
#include <string>
#include <vector>

#include "algo/cost_model.h"

namespace chorus::core {

// The revision of the probe's methods, kept with each cached entry: an entry of another
// revision is measured again (2: process_vm_readv reads a source flushed from the caches;
// 3: and one another processor has just written, peer_read_bw_cache; 4: beyond the cache
// too, a source another processor has just written, and the last-level cache's size).
constexpr int kProbeRevision = 4;

// Copy and reduction bandwidth in and out of cache, process_vm_readv bandwidth and cost
// per call, a cross-core flag hand-off, a futex wake-up and a switch between two threads
// polling with sched_yield() on one processor (the same cache lines and system calls as
// between two processes), and a TCP message hand-off and stream rate over loopback
// (core/host_probe_tcp.h). Figures it cannot measure (one processor: no hand-off; no
// process_vm_readv) keep their defaults. Thread-safe.
// `steps`, when given, receives the time of each step ("copy 3.1 ms, ..."); `runnable`,
// when given, the runnable tasks on the host (/proc/loadavg, this thread included)
// sampled before the first step and after each, where the probe runs on one thread;
// `missed`, when given, how many two-thread steps ran out of their time (the helper thread
// found no processor in time: their figures keep the defaults).
algo::CostParams probe_host(std::string* steps = nullptr, std::vector<int>* runnable = nullptr,
                            int* missed = nullptr);

// Whether a probe whose samples of runnable tasks were `runnable` ran on a quiet host: in
// all samples but one at most (a kernel worker that runs for a moment), no more tasks were
// runnable than leave the probe's thread and its helper thread a processor of `cpus` each,
// and no two-thread step was `missed`.
bool quiet_probe(const std::vector<int>& runnable, int cpus, int missed = 0);

// The better figure of two probes of one host, each: the higher bandwidths, the lower
// latencies (load only ever slows a figure down); the sizes and processors of `now`.
algo::CostParams best_of(const algo::CostParams& before, const algo::CostParams& now);

// "CPU model (family F model M)|processors|kernel release": what the tuning cache is
// keyed by.
std::string host_key();

}  // namespace chorus::core
