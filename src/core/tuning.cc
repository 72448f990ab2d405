// The tuning cache and its agreement (tuning.h). The file (docs/CONFIG.md, "Tuning file"):
//   {"version": 1,
//    "hosts": {"<CPU model>|<processors>|<kernel release>":
//                {"params": {"sync_us": 0.21, ...}, "probe_ms": 31.5, "quiet": true,
//                 "probe": 4}},
//    "table": [{"op": "all_reduce", "ranks": 2, "lo": 0, "hi": 65536, "algo": "shm"}]}
#include "core/tuning.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "config/environment.h"
#include "core/host_probe.h"
#include "diag/log.h"
#include "util/strings.h"

namespace chorus::core {

namespace {

using json = nlohmann::json;

bool read_file(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return static_cast<bool>(in) || in.eof();
}

// "k=v;k=v" (algo::to_text) <-> {"k": v, ...}
json params_json(const algo::CostParams& p) {
  json j = json::object();
  for (const std::string& kv : str_split(algo::to_text(p), ';')) {
    const std::size_t eq = kv.find('=');
    j[kv.substr(0, eq)] = std::stod(kv.substr(eq + 1));
  }
  return j;
}

bool params_from_json(const json& j, algo::CostParams& out) {
  if (!j.is_object()) return false;
  const std::string order = algo::to_text(algo::CostParams{});
  std::string text;
  for (const std::string& kv : str_split(order, ';')) {
    const std::string key = kv.substr(0, kv.find('='));
    auto it = j.find(key);
    if (it == j.end() || !it->is_number()) return false;
    if (!text.empty()) text += ';';
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", it->get<double>());
    text += key + "=" + buf;
  }
  return algo::from_text(text, out);
}

void warn_once(const std::string& what) {
  static std::once_flag once;
  std::call_once(once, [&] { CHORUS_LOG(WARN, Init, "%s", what.c_str()); });
}

// Writes `doc` to `path` through a temporary file renamed over it; false on failure.
bool write_atomically(const std::string& path, const json& doc) {
  std::error_code ec;
  const std::filesystem::path p(path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return false;
    out << doc.dump(2) << "\n";
    if (!out) return false;
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) std::filesystem::remove(tmp, ec);
  return !ec;
}

// This host's entry in a parsed tuning file: none (or parameters that do not parse), one a
// busy probe or an older Chorus wrote (provisional), or one a quiet probe wrote. Its
// parameters go to `out`.
enum class Entry { kNone, kProvisional, kQuiet };
Entry host_entry(const json& doc, const std::string& key, algo::CostParams& out) {
  if (!doc.is_object() || !doc.contains("hosts") || !doc["hosts"].is_object() ||
      !doc["hosts"].contains(key) || !doc["hosts"][key].is_object() ||
      !params_from_json(doc["hosts"][key].value("params", json()), out) ||
      doc["hosts"][key].value("probe", json()) != json(kProbeRevision))
    return Entry::kNone;
  const json quiet = doc["hosts"][key].value("quiet", json());
  return quiet.is_boolean() && quiet.get<bool>() ? Entry::kQuiet : Entry::kProvisional;
}

// This host's parameters from the file at `path`, probing (and writing back) when the
// file lacks them; `table` receives the file's table, if any. A probe that ran while
// other tasks were runnable is kept as provisional ("quiet": false): the next init probes
// again and keeps the better of the two figures, until a probe finds the host quiet (a
// first init in the middle of a parallel test run or of a job's start-up would otherwise
// leave figures measured under load in the cache for good). Entries written before
// "quiet" existed count as provisional.
algo::CostParams cached_params(const std::string& path, std::vector<algo::SelectorConfig::TableRow>& table) {
  const std::string key = host_key();
  json doc = json::object();
  std::string text;
  if (path != "none" && read_file(path, text)) {
    doc = json::parse(text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object() || doc.value("version", 0) != 1) {
      warn_once("tuning file " + path + " is corrupt or of another version: measuring this "
                "host again and rewriting it");
      doc = json::object();
    }
  }
  if (doc.contains("table")) {
    std::string why;
    if (!parse_table(doc.dump(), table, why)) {
      warn_once("tuning file " + path + ": table ignored (" + why + ")");
      table.clear();
    }
  }
  algo::CostParams cached;
  const Entry entry = host_entry(doc, key, cached);
  if (entry == Entry::kQuiet) return cached;
  const bool have = entry == Entry::kProvisional;
  const auto t0 = std::chrono::steady_clock::now();
  std::string steps;
  std::vector<int> runnable;
  int missed = 0;
  algo::CostParams p = probe_host(&steps, &runnable, &missed);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const bool quiet = quiet_probe(runnable, p.cpus, missed);
  if (have) p = best_of(cached, p);
  std::string seen;
  for (int r : runnable) seen += (seen.empty() ? "" : ",") + std::to_string(r);
  if (missed > 0) seen += str_printf("; %d two-thread steps out of time", missed);
  CHORUS_LOG(INFO, Init, "host probe took %.1f ms (%s), runnable tasks %s (%s)%s: %s", ms,
             steps.c_str(), seen.c_str(), quiet ? "quiet" : "busy: provisional",
             have ? ", merged with the cached provisional figures" : "",
             algo::to_text(p).c_str());
  if (path == "none") return p;
  doc["version"] = 1;
  if (!doc.contains("hosts") || !doc["hosts"].is_object()) doc["hosts"] = json::object();
  doc["hosts"][key] =
      json{{"params", params_json(p)}, {"probe_ms", ms}, {"quiet", quiet}, {"probe", kProbeRevision}};
  if (!write_atomically(path, doc))
    warn_once("tuning file " + path + " could not be written: the probe will run again");
  return p;
}

}  // namespace

bool parse_table(const std::string& json_text, std::vector<algo::SelectorConfig::TableRow>& out,
                 std::string& why) {
  const json doc = json::parse(json_text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    why = "not a JSON object";
    return false;
  }
  const json& rows = doc.contains("table") ? doc["table"] : json();
  if (!rows.is_array()) {
    why = "no \"table\" array";
    return false;
  }
  std::vector<algo::SelectorConfig::TableRow> parsed;
  for (const json& r : rows) {
    algo::SelectorConfig::TableRow row;
    if (!r.is_object() || !r.contains("op") || !r["op"].is_string() || !r.contains("algo") ||
        !r["algo"].is_string() || !r.contains("ranks") || !r["ranks"].is_number_integer() ||
        !r.contains("lo") || !r["lo"].is_number_unsigned()) {
      why = "a row lacks op, ranks, lo or algo: " + r.dump();
      return false;
    }
    row.kind = r["op"].get<std::string>();
    row.algo = r["algo"].get<std::string>();
    row.nranks = r["ranks"].get<int>();
    row.lo = r["lo"].get<std::uint64_t>();
    if (r.contains("hi") && !r["hi"].is_null()) {
      if (!r["hi"].is_number_unsigned()) {
        why = "a row's hi is not a size: " + r.dump();
        return false;
      }
      row.hi = r["hi"].get<std::uint64_t>();
    }
    parsed.push_back(row);
  }
  out = std::move(parsed);
  return true;
}

std::string to_text(const Tuning& t) {
  std::string out = algo::to_text(t.cost) + "\n";
  for (const auto& r : t.table)
    out += str_printf("%s %d %llu %llu %s\n", r.kind.c_str(), r.nranks,
                      static_cast<unsigned long long>(r.lo), static_cast<unsigned long long>(r.hi),
                      r.algo.c_str());
  return out;
}

bool from_text(const std::string& text, Tuning& out) {
  std::istringstream in(text);
  std::string line;
  Tuning t;
  if (!std::getline(in, line) || !algo::from_text(line, t.cost)) return false;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::istringstream ls(line);
    algo::SelectorConfig::TableRow r;
    unsigned long long lo = 0, hi = 0;
    if (!(ls >> r.kind >> r.nranks >> lo >> hi >> r.algo)) return false;
    r.lo = lo;
    r.hi = hi;
    t.table.push_back(r);
  }
  out = std::move(t);
  return true;
}

// How long rank 0 waits for the other ranks to reach the tuning before it probes anyway,
// and how long it lets the last one settle into its wait (its store calls, the launcher
// relaying output): at 4-rank job starts on 2 vCPUs, 4 of 8 probes found a second task
// runnable in their first samples without the pause, 2 of 12 with 5-10 ms.
constexpr auto kArrivalWait = std::chrono::seconds(2);
constexpr auto kSettle = std::chrono::milliseconds(10);

std::string tuning_path(const std::string& configured) {
  if (!configured.empty()) return configured;
  const auto& env = config::Environment::process();
  if (auto xdg = env.get("XDG_CACHE_HOME"); xdg && !xdg->empty()) return *xdg + "/chorus/tuning.json";
  if (auto home = env.get("HOME"); home && !home->empty()) return *home + "/.cache/chorus/tuning.json";
  return "none";
}

namespace {
// This process's tuning per (tuning file path, table file): each is read once.
struct Tuned {
  std::mutex mu;
  std::map<std::string, Tuning> done;
};
Tuned& tuned() {
  static Tuned t;
  return t;
}
}  // namespace

bool probe_due(const std::string& tuning_file, const std::string& table_file) {
  const std::string path = tuning_path(tuning_file);
  {
    std::lock_guard<std::mutex> g(tuned().mu);
    if (tuned().done.count(path + "\n" + table_file) != 0) return false;
  }
  std::string text;
  if (path == "none" || !read_file(path, text)) return true;
  algo::CostParams unused;
  return host_entry(json::parse(text, nullptr, false), host_key(), unused) != Entry::kQuiet;
}

Result<Tuning> local_tuning(const std::string& tuning_file, const std::string& table_file) {
  const std::string path = tuning_path(tuning_file);
  std::lock_guard<std::mutex> g(tuned().mu);
  std::map<std::string, Tuning>& done = tuned().done;
  if (auto it = done.find(path + "\n" + table_file); it != done.end()) return it->second;
  Tuning t;
  t.cost = cached_params(path, t.table);
  if (!table_file.empty()) {
    std::string text, why;
    if (!read_file(table_file, text))
      return invalid_argument("CHORUS_TUNING_TABLE='" + table_file + "' cannot be read");
    if (!parse_table(text, t.table, why))
      return invalid_argument("CHORUS_TUNING_TABLE='" + table_file + "': " + why);
  }
  done[path + "\n" + table_file] = t;
  return t;
}

Result<Tuning> agree_tuning(int rank, int size, bootstrap::Store& store,
                            const std::string& tuning_file, const std::string& table_file,
                            Deadline deadline) {
  if (rank == 0) {
    // A probe is due: wait (a little) until every other rank waits for the tuning, asleep
    // in the store, rather than starting up on the processors the probe measures.
    if (size > 1 && probe_due(tuning_file, table_file)) {
      (void)store.get("tuning/arrived",
                      Deadline::earliest(deadline, Deadline::after(kArrivalWait)));
      std::this_thread::sleep_for(kSettle);
    }
    Result<Tuning> mine = local_tuning(tuning_file, table_file);
    const std::string text = mine.has_value() ? to_text(*mine) : "!" + mine.status().message();
    CHORUS_RETURN_IF_ERROR(store.set("tuning", bootstrap::Bytes(text.begin(), text.end())));
    return mine;
  }
  CHORUS_ASSIGN_OR_RETURN(std::int64_t waiting, store.add("tuning/waiting", 1));
  if (waiting == size - 1) CHORUS_RETURN_IF_ERROR(store.set("tuning/arrived", {'1'}));
  CHORUS_ASSIGN_OR_RETURN(bootstrap::Bytes raw, store.get("tuning", deadline));
  const std::string text(raw.begin(), raw.end());
  if (!text.empty() && text[0] == '!') return invalid_argument("rank 0: " + text.substr(1));
  Tuning t;
  if (!from_text(text, t))
    return Status(ErrorCode::kDesync, "the store holds a malformed tuning record from rank 0");
  return t;
}

}  // namespace chorus::core
