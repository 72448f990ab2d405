// The flight recorder's JSON dump: one object per dump (schema "chorus.flight_record",
// version 1; fields in docs/DIAGNOSTICS.md, "JSON dump"), written on one line.
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "diag/flight_recorder.h"

namespace chorus::diag {

namespace {

using Json = nlohmann::ordered_json;

// A static name, or null when it does not apply ("" in the recorder).
Json name_or_null(const char* s) { return (s != nullptr && *s != '\0') ? Json(s) : Json(); }
Json rank_or_null(int r) { return r >= 0 ? Json(r) : Json(); }

Json entry_json(const FlightEntry& e, std::int64_t now) {
  Json j;
  j["seq"] = e.op.seq;
  j["op"] = name_or_null(e.op.name);
  j["dtype"] = name_or_null(e.op.dtype);
  j["count"] = e.op.count;
  j["redop"] = name_or_null(e.op.redop);
  j["root"] = rank_or_null(e.op.root);
  j["peer"] = rank_or_null(e.op.peer);
  j["bytes"] = e.op.bytes;
  j["algo"] = name_or_null(e.algo);
  j["state"] = to_string(e.state);
  j["issued"] = iso_time(e.issue_wall_ns);
  j["wait_us"] = wait_us(e, now);
  j["run_us"] = run_us(e, now);
  j["error"] = e.state == OpState::kFailed ? Json(e.error) : Json();
  return j;
}

Json summary_json(const FlightSummary& s) {
  Json j;
  if (s.done_seq >= 0)
    j["last_completed"] = {{"seq", s.done_seq}, {"op", name_or_null(s.done_name)},
                           {"peer", rank_or_null(s.done_peer)}};
  else
    j["last_completed"] = nullptr;
  if (s.cur_seq >= 0)
    j["current"] = {{"seq", s.cur_seq}, {"op", name_or_null(s.cur_name)},
                    {"peer", rank_or_null(s.cur_peer)}, {"state", to_string(s.cur_state)}};
  else
    j["current"] = nullptr;
  return j;
}

}  // namespace

std::string FlightRecorder::dump_json(const char* reason) const {
  const std::vector<FlightEntry> entries = snapshot();
  const FlightSummary sum = summary();
  static const std::string host = this_host();
  Json j;
  j["schema"] = kFlightRecordJsonSchema;
  j["version"] = kFlightRecordJsonVersion;
  j["comm"] = comm_;
  j["rank"] = rank_;
  j["size"] = size_;
  j["host"] = host;
  j["pid"] = static_cast<long>(::getpid());
  j["reason"] = reason;
  j["time"] = iso_time(wall_now_ns());
  j["recorded"] = recorded();
  j["capacity"] = ring_.size();
  const Json s = summary_json(sum);
  j["last_completed"] = s["last_completed"];
  j["current"] = s["current"];
  Json list = Json::array();
  const std::int64_t now = tick_now_ns();
  for (const FlightEntry& e : entries) list.push_back(entry_json(e, now));
  j["entries"] = std::move(list);
  // Error texts come from the wire (abort reasons) and may hold any byte: replace
  // invalid UTF-8 rather than throw.
  return j.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace chorus::diag
