// chorus-trace report: per operation kind and size class, count, bytes, time p50/p99,
// busbw and arrival skew; per level of a hierarchical algorithm, its time p50/p99; the
// ranks that arrive last most often (stragglers); per stream, how much of its busy time
// other streams of the same rank were busy (overlap).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trace.h"

namespace chorus_trace {

// The report as JSON (schema in docs/DIAGNOSTICS.md, "chorus-trace").
nlohmann::json report(const std::vector<RankFile>& files);
// The same as text tables.
std::string report_text(const nlohmann::json& r);

}  // namespace chorus_trace
