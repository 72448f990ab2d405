// Merging per-rank timelines into one trace.
#include "merge.h"

namespace chorus_trace {

namespace {

nlohmann::json phase(const Span& s, const char* name, double ts, double dur) {
  return {{"ph", "X"}, {"cat", "chorus.phase"}, {"name", name}, {"pid", s.rank},
          {"tid", s.tid}, {"ts", ts}, {"dur", dur}};
}

}  // namespace

nlohmann::json merge(const std::vector<RankFile>& files) {
  nlohmann::json events = nlohmann::json::array();
  nlohmann::json ranks = nlohmann::json::array();
  for (const auto& f : files) {
    for (const auto& e : f.events) events.push_back(e);
    ranks.push_back(f.other);
  }
  for (const Instance& in : match(files)) {
    if (!in.complete()) continue;
    for (const Span* s : in.spans) {
      // Clock error can put the last arrival a little past a short span's end: clamp.
      const double wait = std::min(std::max(0.0, in.last_start - s->ts), s->dur);
      if (wait > 0) events.push_back(phase(*s, "arrival wait", s->ts, wait));
      if (s->dur - wait > 0) events.push_back(phase(*s, "transfer", s->ts + wait, s->dur - wait));
    }
  }
  return {{"otherData", {{"chorus_ranks", ranks}, {"chorus_trace", 1}}},
          {"displayTimeUnit", "ns"},
          {"traceEvents", events}};
}

}  // namespace chorus_trace
