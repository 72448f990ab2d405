// How far apart the processors a job may run on are: a cache line's round trip and a
// 64 KiB hand-over between two threads pinned on two processors. On a virtual machine the
// host decides where each virtual processor runs, and shared-memory collectives slow down
// several times when two of them land far apart (docs/PERFORMANCE.md, "Session 19").
#pragma once
#include <string>
#include <vector>

namespace chorus_info {

struct CoreTrip {
  int a = -1, b = -1;        // processors
  double round_trip_ns = 0;  // median over batches of a flag's round trip; 0: no result
  double handover_us = 0;    // median over rounds of 64 KiB written on a, read on b; 0: none
};

// The processors of this thread's affinity mask, ascending.
std::vector<int> allowed_cpus();
// The pairs to measure: every pair when there are at most `full_up_to` processors, else
// the first processor with each of the others.
std::vector<CoreTrip> pairs_of(const std::vector<int>& cpus, std::size_t full_up_to = 16);
// Measures one pair with two new threads pinned on its processors (the caller's affinity
// is left alone); gives up (zeros) when a thread cannot be pinned or the pair makes no
// progress for a second.
CoreTrip measure(int a, int b);
double median(std::vector<double> values);  // 0 when empty
// Text: one line per pair; JSON: {"cpus": [...], "pairs": [{"a", "b", "round_trip_ns",
// "handover_us"}]} (null where no result).
std::string format_trips_text(const std::vector<CoreTrip>& trips);
std::string format_trips_json(const std::vector<int>& cpus, const std::vector<CoreTrip>& trips);

}  // namespace chorus_info
