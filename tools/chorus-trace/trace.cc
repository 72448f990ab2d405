// Loading CHORUS_TIMELINE files and matching their spans across ranks.
#include "trace.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace chorus_trace {

namespace {

nlohmann::json parse_tolerant(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_discarded()) return j;
  // A rank that died leaves the array open: close it after the last complete event.
  const auto last = text.rfind('}');
  if (last == std::string::npos) throw std::runtime_error(path + " is not a trace");
  text.resize(last + 1);
  j = nlohmann::json::parse(text + "\n]}", nullptr, false);
  if (j.is_discarded()) throw std::runtime_error(path + " is not valid trace JSON");
  return j;
}

void read_spans(RankFile& f) {
  std::map<long, std::string> keys;  // comm id -> key
  for (const auto& e : f.events)
    if (e.value("ph", "") == "M" && e.value("name", "") == "chorus_comm" && e.value("pid", -1) == f.rank)
      keys[e["args"].value("comm", 0L)] = e["args"].value("key", "");
  for (const auto& e : f.events) {
    if (e.value("ph", "") != "X" || e.value("pid", -1) != f.rank) continue;
    const auto& a = e.value("args", nlohmann::json::object());
    if (e.value("cat", "") == "chorus.level") {
      f.levels.push_back({a.value("op", ""), e.value("name", ""), a.value("via", ""),
                          a.value("level", 0), e.value("dur", 0.0)});
      continue;
    }
    if (e.value("cat", "") != "chorus") continue;
    Span s;
    s.rank = f.rank;
    s.tid = e.value("tid", 0L);
    s.name = e.value("name", "");
    s.comm_key = keys.count(a.value("comm", 0L)) ? keys[a.value("comm", 0L)]
                                                  : "comm" + std::to_string(a.value("comm", 0L));
    s.comm_rank = a.value("rank", 0);
    s.comm_size = a.value("size", 1);
    s.seq = a.value("seq", 0ULL);
    s.stream = a.value("stream", "");
    s.algo = a.value("algo", "");
    s.dtype = a.value("dtype", "");
    s.ts = e.value("ts", 0.0);
    s.dur = e.value("dur", 0.0);
    s.queued = std::max(0.0, a.value("queued_us", 0.0));
    s.bytes = a.value("bytes", 0.0);
    s.peer = a.value("peer", -1);
    s.ok = a.value("ok", true);
    f.spans.push_back(std::move(s));
  }
}

}  // namespace

std::vector<RankFile> load(const std::string& path) {
  nlohmann::json j = parse_tolerant(path);
  if (!j.contains("traceEvents")) throw std::runtime_error(path + " has no traceEvents");
  std::vector<RankFile> out;
  const auto& other = j.value("otherData", nlohmann::json::object());
  if (other.contains("chorus_timeline")) {
    RankFile f;
    f.path = path;
    f.rank = other.value("rank", 0);
    f.size = other.value("size", 0);
    f.other = other;
    f.events = j["traceEvents"];
    read_spans(f);
    out.push_back(std::move(f));
    return out;
  }
  if (!other.contains("chorus_ranks")) throw std::runtime_error(path + " is not a Chorus trace");
  for (const auto& r : other["chorus_ranks"]) {  // a merged trace: split it by pid
    RankFile f;
    f.path = path;
    f.rank = r.value("rank", 0);
    f.size = r.value("size", 0);
    f.other = r;
    f.events = nlohmann::json::array();
    for (const auto& e : j["traceEvents"])
      if (e.value("pid", -1) == f.rank && e.value("cat", "") != "chorus.phase") f.events.push_back(e);
    read_spans(f);
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<Instance> match(const std::vector<RankFile>& files) {
  std::map<std::pair<std::string, unsigned long long>, Instance> by_key;
  for (const auto& f : files)
    for (const auto& s : f.spans) {
      if (s.peer >= 0 || s.name == "send" || s.name == "recv") continue;
      Instance& in = by_key[{s.comm_key, s.seq}];
      in.expected = s.comm_size;
      in.spans.push_back(&s);
    }
  std::vector<Instance> out;
  for (auto& [key, in] : by_key) {
    std::vector<const Span*>& v = in.spans;
    std::sort(v.begin(), v.end(),
              [](const Span* a, const Span* b) { return a->issued() < b->issued(); });
    in.first_arrival = v.front()->issued();
    in.last_arrival = v.back()->issued();
    in.last_rank = v.back()->rank;
    in.second_arrival = v.size() > 1 ? v[v.size() - 2]->issued() : in.last_arrival;
    in.last_start = v.front()->ts;
    in.last_end = v.front()->end();
    for (const Span* s : v) {
      in.last_start = std::max(in.last_start, s->ts);
      in.last_end = std::max(in.last_end, s->end());
    }
    out.push_back(std::move(in));
  }
  return out;
}

}  // namespace chorus_trace
