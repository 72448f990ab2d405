// chorus-trace merge: every rank's file in one trace (ranks as processes), with the
// phases of each collective seen by all its ranks added inside its spans.
#pragma once
#include <vector>

#include <nlohmann/json.hpp>

#include "trace.h"

namespace chorus_trace {

// The merged trace: every event of every file, and per complete collective instance, in
// each rank's span, "arrival wait" (from its start until the last rank started) and
// "transfer" (from then to its end) as child spans of category "chorus.phase".
// otherData.chorus_ranks lists each file's otherData (clock offset and error).
nlohmann::json merge(const std::vector<RankFile>& files);

}  // namespace chorus_trace
