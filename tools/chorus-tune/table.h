// The tuning table chorus-tune --write produces (read by the library through
// CHORUS_TUNING_TABLE; format in docs/CONFIG.md, "Tuning table").
#pragma once
#include <string>
#include <vector>

#include "sweep.h"

namespace chorus_tune {

// Per (collective, ranks): consecutive cells with the same best algorithm merged into one
// size range; the first starts at 0, the last has no upper bound. "" or an error message.
std::string write_table(const std::string& path, const std::vector<Cell>& cells);

}  // namespace chorus_tune
