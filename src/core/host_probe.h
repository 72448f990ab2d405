// The host probe: measures the cost model's parameters (algo/cost_model.h) on this
// machine in a few tens of milliseconds, and names the machine for the per-host cache.
#pragma once
#include <string>
#include <vector>

#include "algo/cost_model.h"

namespace chorus::core {

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
// latencies (load only ever slows a figure down); the sizes and processors of `now`. The
// figures of two threads handing cache lines over (sync_us, stage_bw, ring_bw,
// exchange_bw) come as one group from the probe whose ring ran faster.
algo::CostParams best_of(const algo::CostParams& before, const algo::CostParams& now);

// Where the host runs two of its processors right now, as the figures that hand cache lines
// between two threads see it: a flag's hand-off (sync_us, as the probe's) and the rings'
// one-way stream (ring_bw, as the probe's). On a virtual machine these change while a job
// runs: the host moves the virtual processors between one core's two threads, cores that
// share a cache and cores that do not, every few seconds (docs/ALGORITHMS.md, "Where the
// processors sit"). Both zero when the host has one processor, other tasks were runnable,
// or the helper thread found no processor in time. About 1-3 ms.
struct PlacementSample {
  double sync_us = 0;
  double ring_bw = 0;
};
PlacementSample sample_placement();

// `probed` with its cache-line figures moved to their expectation over the probe's own
// placement and `samples` (those not zero): the mean hand-off, the harmonic mean of the
// ring's rate (a transfer's expected time is bytes x the mean of 1/rate), and the staged
// window and exchange rates scaled as the ring's. The other figures do not depend on the
// placement and stay.
algo::CostParams over_placements(const algo::CostParams& probed,
                                 const std::vector<PlacementSample>& samples);

// "CPU model|processors|kernel release": what the tuning cache is keyed by.
std::string host_key();

}  // namespace chorus::core
