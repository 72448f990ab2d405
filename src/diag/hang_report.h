// Cross-rank hang report: the one-line summary each rank publishes through the store
// (versioned, tab-separated) and the table rank 0 prints from everyone's lines.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace chorus::diag {

// One rank's view of itself when its communicator failed or was destroyed.
struct RankLine {
  int rank = -1;
  bool reported = false;      // false: the rank published nothing (host/pid may be known)
  std::string host;           // "" = unknown
  long pid = -1;              // -1 = unknown
  std::int64_t done_seq = -1; // last completed operation (-1 = none)
  std::string done_op;
  std::int64_t cur_seq = -1;  // operation in progress when it reported (-1 = none)
  std::string cur_op;
  std::string state;          // "failed", "exited" (communicator destroyed), ...
  std::string detail;         // e.g. the error code "peer_lost"
};

// "chorus-hang v1\t<rank>\t<host>\t<pid>\t<done_seq>\t<done_op>\t<cur_seq>\t<cur_op>\t
// <state>\t<detail>". Tabs and newlines inside fields become spaces.
std::string encode_rank_line(const RankLine& line);
// nullopt for anything that is not a v1 line.
std::optional<RankLine> decode_rank_line(std::string_view text);

// "0-3,5,7-8" for sorted ranks.
std::string rank_ranges(const std::vector<int>& ranks);

// The report printed by `reporter`: a title line, one summary line per group of ranks
// in the same situation, then one row per rank. `lines` is indexed by rank.
std::string format_hang_report(std::uint32_t comm, int reporter,
                               const std::vector<RankLine>& lines);

}  // namespace chorus::diag
