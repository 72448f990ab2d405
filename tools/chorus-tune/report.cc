// Printing of chorus-tune's results (report.h).
#include "report.h"

#include <cstdio>
#include <map>
#include <string>

namespace chorus_tune {

namespace {

struct Share {
  int cells = 0, chosen = 0, rules = 0, model = 0;
};

std::string loss_text(const Cell& c, const std::string& algo) {
  if (algo.empty()) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s %+.0f%%", algo.c_str(), c.loss(algo));
  return buf;
}

void print_share(const char* what, const Share& s, double tol) {
  auto pct = [&](int n) { return s.cells ? 100.0 * n / s.cells : 0.0; };
  std::printf("# %-16s cells %3d  within %.0f%%: default %3d (%5.1f%%)  rules %3d (%5.1f%%)  "
              "model %3d (%5.1f%%)\n",
              what, s.cells, tol, s.chosen, pct(s.chosen), s.rules, pct(s.rules), s.model,
              pct(s.model));
}

}  // namespace

void print_cells(const std::vector<Cell>& cells, double tolerance) {
  std::printf("# %-14s %5s %10s %12s  %-40s %-22s %-22s %-22s\n", "op", "ranks", "bytes",
              "best_us", "measured us (predicted us) per algorithm", "default (source)", "rules",
              "model");
  std::map<std::string, Share> per_op;
  Share all;
  for (const Cell& c : cells) {
    std::string algos;
    for (const AlgoTime& t : c.times) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "%s%s=%.1f(%.1f)", algos.empty() ? "" : " ",
                    t.algo.c_str(), t.us, t.predicted_us);
      algos += buf;
    }
    const std::string chosen = loss_text(c, c.chosen) + " (" + c.source + ")";
    std::printf("  %-14s %5d %10zu %12.1f  %-40s %-22s %-22s %-22s\n", c.op.c_str(), c.ranks,
                c.bytes, c.best_us, algos.c_str(), chosen.c_str(),
                loss_text(c, c.rule_algo).c_str(), loss_text(c, c.model_algo).c_str());
    for (Share* s : {&per_op[c.op], &all}) {
      ++s->cells;
      s->chosen += c.loss(c.chosen) <= tolerance;
      s->rules += c.loss(c.rule_algo) <= tolerance && !c.rule_algo.empty();
      s->model += c.model_algo.empty() ? 0 : c.loss(c.model_algo) <= tolerance;
    }
  }
  for (const auto& [op, s] : per_op) print_share(op.c_str(), s, tolerance);
  print_share("all", all, tolerance);
}

}  // namespace chorus_tune
