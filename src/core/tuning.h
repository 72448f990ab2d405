// The tuning every rank of a communicator chooses algorithms with: the host's cost-model
// parameters (measured once per host, cached in CHORUS_TUNING_FILE) and the tuning table
// (CHORUS_TUNING_TABLE or the tuning file's "table"), read by rank 0 and shared through
// the store so that every rank makes the same choice.
#pragma once
#include <string>
#include <vector>

#include "algo/selector.h"
#include "bootstrap/store.h"
#include "util/deadline.h"
#include "util/status.h"

namespace chorus::core {

struct CommConfig;

struct Tuning {
  algo::CostParams cost;
  std::vector<algo::SelectorConfig::TableRow> table;
};

// One text form (the cost line, then one "op ranks lo hi algo" line per table row).
std::string to_text(const Tuning& t);
bool from_text(const std::string& text, Tuning& out);

// The tuning file's path: `configured` unless empty, else $XDG_CACHE_HOME/chorus/tuning.json,
// else ~/.cache/chorus/tuning.json ("none" stays "none": probe, never read or write).
std::string tuning_path(const std::string& configured);

// This process's view: the cached parameters of this host when the file has them, else a
// probe (whose result is written back; a corrupt or unwritable file warns once and init
// goes on). Read once per process and file. kInvalidArgument naming CHORUS_TUNING_TABLE
// when that file cannot be read or parsed.
Result<Tuning> local_tuning(const std::string& tuning_file, const std::string& table_file);

// Whether local_tuning() would probe: this process has not read the file yet and it holds
// no entry of this host from a quiet probe.
bool probe_due(const std::string& tuning_file, const std::string& table_file);

// Rank 0's local_tuning(), published under "tuning" in `store`; every other rank reads
// it (and fails with rank 0's error when rank 0 had one). When rank 0 has to probe, it
// first waits up to 2 s for the `size` - 1 others to be waiting for it (they count
// themselves in the store), then 10 ms more, so the probe does not measure their start-up.
Result<Tuning> agree_tuning(int rank, int size, bootstrap::Store& store,
                            const std::string& tuning_file, const std::string& table_file,
                            Deadline deadline);

// Parses a tuning table: {"version": 1, "table": [{"op", "ranks", "lo", "hi", "algo"}]}
// ("hi" absent or null: no bound). false with `why` on malformed text.
bool parse_table(const std::string& json_text, std::vector<algo::SelectorConfig::TableRow>& out,
                 std::string& why);

}  // namespace chorus::core
