// Test helper: validates JSON written by chorus-bench --json (every row checked and
// 0 wrong, the listed collectives present) or by chorus-info --json (--info NAME:
// the parameter NAME is listed). Prints the problem and exits 1 on failure.
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

namespace {

int fail(const std::string& why) {
  std::cerr << "bench_json_check: " << why << "\n";
  return 1;
}

int check_bench(const nlohmann::json& rows, const std::set<std::string>& want_ops) {
  if (!rows.is_array() || rows.empty()) return fail("expected a non-empty array of rows");
  std::set<std::string> ops;
  for (const auto& row : rows) {
    for (const char* key : {"op", "nranks", "size", "count", "type", "redop", "root",
                            "oop_time_us", "oop_min_us", "oop_max_us", "oop_algbw", "oop_busbw",
                            "oop_wrong", "ip_time_us", "ip_algbw", "ip_busbw", "ip_wrong"})
      if (!row.contains(key)) return fail(std::string("row without \"") + key + "\": " + row.dump());
    if (row["oop_wrong"] != 0 || row["ip_wrong"] != 0)
      return fail("row with wrong results: " + row.dump());
    if (!(row["oop_time_us"].get<double>() > 0)) return fail("row without a time: " + row.dump());
    // The mean lies between the fastest and the slowest iteration (rounding aside).
    const double mean = row["oop_time_us"], lo = row["oop_min_us"], hi = row["oop_max_us"];
    if (!(lo > 0 && lo <= mean * 1.0001 && mean <= hi * 1.0001))
      return fail("fastest/mean/slowest out of order: " + row.dump());
    ops.insert(row["op"].get<std::string>());
  }
  for (const std::string& op : want_ops)
    if (!ops.count(op)) return fail("no row for " + op);
  return 0;
}

int check_info(const nlohmann::json& doc, const std::string& name) {
  if (!doc.contains("version") || !doc["params"].is_array()) return fail("not chorus-info JSON");
  for (const auto& p : doc["params"])
    if (p.value("name", "") == name) return 0;
  return fail(name + " is not listed");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return fail("usage: bench_json_check FILE [OP...] | bench_json_check FILE --info NAME");
  std::ifstream in(argv[1]);
  if (!in) return fail(std::string("cannot open ") + argv[1]);
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    return fail(std::string("invalid JSON: ") + e.what());
  }
  if (argc == 4 && std::string(argv[2]) == "--info") return check_info(doc, argv[3]);
  return check_bench(doc, std::set<std::string>(argv + 2, argv + argc));
}
