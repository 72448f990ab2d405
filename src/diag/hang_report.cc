// Cross-rank hang report: encoding of the per-rank summary line and the printed table.
#include "diag/hang_report.h"

#include <algorithm>
#include <map>

#include "util/strings.h"

namespace chorus::diag {

namespace {

constexpr std::string_view kMagic = "chorus-hang v1";

std::string clean(const std::string& s) {
  std::string out = s;
  for (char& c : out)
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  return out;
}

std::string seq_op(std::int64_t seq, const std::string& op) {
  if (seq < 0) return "-";
  return str_printf("seq %lld %s", static_cast<long long>(seq), op.c_str());
}

std::string state_text(const RankLine& l) {
  if (!l.reported) return "no report";
  return l.detail.empty() ? l.state : l.state + " (" + l.detail + ")";
}

// What a rank was doing, without its name: identical texts are grouped.
std::string situation(const RankLine& l) {
  if (!l.reported) return "no report (exited or stalled?)";
  if (l.state == "exited")
    return l.done_seq >= 0 ? "exited (communicator destroyed) after completing " +
                                 seq_op(l.done_seq, l.done_op)
                           : "exited (communicator destroyed) before completing any operation";
  if (l.cur_seq >= 0) return state_text(l) + " in " + seq_op(l.cur_seq, l.cur_op);
  return state_text(l) + (l.done_seq >= 0 ? " after " + seq_op(l.done_seq, l.done_op)
                                           : std::string(" before any operation"));
}

// Culprits first: ranks without a report, then ranks that exited, then the rest.
int rank_order(const RankLine& l) {
  if (!l.reported) return 0;
  return l.state == "exited" ? 1 : 2;
}

std::string who(const RankLine& l) {
  std::string s = str_printf("rank %d", l.rank);
  if (!l.host.empty() || l.pid >= 0)
    s += str_printf(" (host %s pid %ld)", l.host.empty() ? "?" : l.host.c_str(), l.pid);
  return s;
}

}  // namespace

std::string encode_rank_line(const RankLine& l) {
  return str_printf("%.*s\t%d\t%s\t%ld\t%lld\t%s\t%lld\t%s\t%s\t%s",
                    static_cast<int>(kMagic.size()), kMagic.data(), l.rank, clean(l.host).c_str(),
                    l.pid, static_cast<long long>(l.done_seq), clean(l.done_op).c_str(),
                    static_cast<long long>(l.cur_seq), clean(l.cur_op).c_str(),
                    clean(l.state).c_str(), clean(l.detail).c_str());
}

std::optional<RankLine> decode_rank_line(std::string_view text) {
  const std::vector<std::string> f = str_split(text, '\t');
  if (f.size() != 10 || f[0] != kMagic) return std::nullopt;
  auto rank = parse_int(f[1]), pid = parse_int(f[3]), done = parse_int(f[4]),
       cur = parse_int(f[6]);
  if (!rank || !pid || !done || !cur) return std::nullopt;
  RankLine l;
  l.rank = static_cast<int>(*rank);
  l.reported = true;
  l.host = f[2];
  l.pid = static_cast<long>(*pid);
  l.done_seq = *done;
  l.done_op = f[5];
  l.cur_seq = *cur;
  l.cur_op = f[7];
  l.state = f[8];
  l.detail = f[9];
  return l;
}

std::string rank_ranges(const std::vector<int>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += j == i ? std::to_string(ranks[i])
                  : str_printf("%d-%d", ranks[i], ranks[j]);
    i = j + 1;
  }
  return out;
}

std::string format_hang_report(std::uint32_t comm, int reporter,
                               const std::vector<RankLine>& lines) {
  std::string out = str_printf("chorus hang report v1 (comm %u, %zu ranks, printed by rank %d):\n",
                               comm, lines.size(), reporter);
  // Group ranks with the same situation; order groups by culprit class, then first rank.
  std::map<std::pair<int, std::string>, std::vector<int>> groups;
  for (const RankLine& l : lines) {
    const std::string s = situation(l);
    groups[{rank_order(l), s}].push_back(l.rank);
  }
  std::vector<std::pair<std::pair<int, int>, std::string>> order;
  for (const auto& [key, ranks] : groups) order.push_back({{key.first, ranks.front()}, key.second});
  std::sort(order.begin(), order.end());
  for (const auto& [key, s] : order) {
    const std::vector<int>& ranks = groups[{key.first, s}];
    if (ranks.size() == 1)
      out += "  " + who(lines[static_cast<std::size_t>(ranks[0])]) + ": " + s + "\n";
    else
      out += "  ranks " + rank_ranges(ranks) + ": " + s + "\n";
  }
  out += str_printf("  %-5s %-16s %-8s %-24s %-24s %s\n", "rank", "host", "pid", "last completed",
                    "current", "state");
  for (const RankLine& l : lines) {
    out += str_printf("  %-5d %-16s %-8s %-24s %-24s %s\n", l.rank,
                      l.host.empty() ? "?" : l.host.c_str(),
                      l.pid >= 0 ? std::to_string(l.pid).c_str() : "?",
                      l.reported ? seq_op(l.done_seq, l.done_op).c_str() : "?",
                      l.reported ? seq_op(l.cur_seq, l.cur_op).c_str() : "?",
                      l.reported ? state_text(l).c_str() : "no report (exited or stalled?)");
  }
  out += str_printf("chorus hang report end (comm %u)\n", comm);
  return out;
}

}  // namespace chorus::diag
