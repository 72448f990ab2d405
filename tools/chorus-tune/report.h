// chorus-tune's printed tables: one line per cell (every algorithm's time, the best, the
// default choice with its loss, the rules' and the model's choices with theirs), then
// per collective and overall the share of cells within the tolerance.
#pragma once
#include <vector>

#include "sweep.h"

namespace chorus_tune {

void print_cells(const std::vector<Cell>& cells, double tolerance);

}  // namespace chorus_tune
