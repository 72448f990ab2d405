// The tuning cache and its agreement (tuning.h). The file (docs/CONFIG.md, "Tuning file"):
//   {"version": 1,
//    "hosts": {"<CPU model>|<processors>|<kernel release>":
//                {"params": {"sync_us": 0.21, ...}, "probe_ms": 31.5}},
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

// This host's parameters from the file at `path`, probing (and writing back) when the
// file lacks them; `table` receives the file's table, if any.
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
  algo::CostParams p;
  if (doc.contains("hosts") && doc["hosts"].is_object() && doc["hosts"].contains(key) &&
      doc["hosts"][key].is_object() && params_from_json(doc["hosts"][key].value("params", json()), p))
    return p;
  const auto t0 = std::chrono::steady_clock::now();
  std::string steps;
  p = probe_host(&steps);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  CHORUS_LOG(INFO, Init, "host probe took %.1f ms (%s): %s", ms, steps.c_str(),
             algo::to_text(p).c_str());
  if (path == "none") return p;
  doc["version"] = 1;
  if (!doc.contains("hosts") || !doc["hosts"].is_object()) doc["hosts"] = json::object();
  doc["hosts"][key] = json{{"params", params_json(p)}, {"probe_ms", ms}};
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

std::string tuning_path(const std::string& configured) {
  if (!configured.empty()) return configured;
  const auto& env = config::Environment::process();
  if (auto xdg = env.get("XDG_CACHE_HOME"); xdg && !xdg->empty()) return *xdg + "/chorus/tuning.json";
  if (auto home = env.get("HOME"); home && !home->empty()) return *home + "/.cache/chorus/tuning.json";
  return "none";
}

Result<Tuning> local_tuning(const std::string& tuning_file, const std::string& table_file) {
  static std::mutex mu;
  static std::map<std::string, Tuning> done;  // per (tuning file, table file)
  const std::string path = tuning_path(tuning_file);
  std::lock_guard<std::mutex> g(mu);
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

Result<Tuning> agree_tuning(int rank, bootstrap::Store& store, const std::string& tuning_file,
                            const std::string& table_file, Deadline deadline) {
  if (rank == 0) {
    Result<Tuning> mine = local_tuning(tuning_file, table_file);
    const std::string text = mine.has_value() ? to_text(*mine) : "!" + mine.status().message();
    CHORUS_RETURN_IF_ERROR(store.set("tuning", bootstrap::Bytes(text.begin(), text.end())));
    return mine;
  }
  CHORUS_ASSIGN_OR_RETURN(bootstrap::Bytes raw, store.get("tuning", deadline));
  const std::string text(raw.begin(), raw.end());
  if (!text.empty() && text[0] == '!') return invalid_argument("rank 0: " + text.substr(1));
  Tuning t;
  if (!from_text(text, t))
    return Status(ErrorCode::kDesync, "the store holds a malformed tuning record from rank 0");
  return t;
}

}  // namespace chorus::core
