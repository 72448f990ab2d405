// chorus-bench output: the nccl-tests style table on stdout and the JSON file.
#pragma once
#include "chorus/profiler.h"
#include <string>
#include <vector>

#include "bench_config.h"
#include "runner.h"

namespace chorus_bench {

void print_banner(const BenchConfig& cfg, int nranks, const std::string& transport);
void print_table_header(Coll c);
void print_row(const RowResult& row);
// "# Out of bounds values : N OK|FAILED" and "# Avg bus bandwidth : X".
void print_footer(const std::vector<RowResult>& rows, bool checked);
// Total mismatching elements over every checked row.
std::int64_t total_wrong(const std::vector<RowResult>& rows);

// Writes Communicator::stats() rows as a JSON array; "" or the error.
std::string write_stats_json(const std::string& path, const std::vector<chorus::OpStatsRow>& rows);
// Writes `rows` as a JSON array of objects with fields op, nranks, size, count, type,
// redop, root, sync (--sync), and per mode (oop_, ip_) time_us (mean), min_us / max_us
// (fastest / slowest iteration), algbw, busbw (GB/s), wrong (null when unchecked) and
// stats_time_us; redop and root are null for collectives without one.
// Returns an error message, or "" on success.
std::string write_json(const std::string& path, const std::vector<RowResult>& rows, int nranks,
                       bool sync);

}  // namespace chorus_bench
