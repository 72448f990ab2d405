// Command-line parsing of chorus-stress (CLI11).
#include "stress_config.h"

#include <CLI/CLI.hpp>
#include <charconv>
#include <iostream>

#include "cli_values.h"

namespace chorus_stress {

namespace {

constexpr const char* kKindNames[kNumKinds] = {"all_reduce", "all_gather", "reduce_scatter",
                                               "all_to_all", "broadcast"};

template <class T>
bool parse_number(std::string_view text, T* out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

// Checks the options that depend on each other; returns an error message or "".
std::string finish(const std::string& pattern, const std::string& size,
                   const std::string& duration, const std::string& log_interval,
                   const std::string& timeout, const std::string& skew,
                   const std::string& groups, const std::vector<std::string>& injections,
                   const std::vector<std::string>& delays, StressConfig* cfg) {
  if (pattern == "5d") {
    cfg->pattern = Pattern::k5d;
  } else if (pattern == "random") {
    cfg->pattern = Pattern::kRandom;
  } else if (auto kind = parse_kind(pattern)) {
    cfg->pattern = Pattern::kSingle;
    cfg->single = *kind;
  } else {
    return "--pattern: unknown pattern '" + pattern +
           "' (5d, random, all_reduce, all_gather, reduce_scatter, all_to_all, broadcast)";
  }
  chorus_tools::parse_bytes(size, &cfg->size_bytes);
  if (cfg->size_bytes == 0) return "--size must be at least 1 byte";
  if (!duration.empty()) chorus_tools::parse_duration(duration, &cfg->duration);
  chorus_tools::parse_duration(log_interval, &cfg->log_interval);
  if (!timeout.empty()) chorus_tools::parse_duration(timeout, &cfg->timeout);
  chorus_tools::parse_duration(skew, &cfg->deadline_skew);
  if (cfg->steps == 0 && cfg->duration.count() == 0) cfg->steps = 100;
  if (cfg->unsafe_local_deadline && cfg->duration.count() == 0)
    return "--unsafe-local-deadline needs --duration";
  if (!groups.empty()) {
    auto parsed = parse_groups(groups);
    if (!parsed) return "--groups: expected e.g. 'tp=2,dp=rest' (dimensions tp dp ep sp pp), got '" +
                        groups + "'";
    cfg->groups = *parsed;
  }
  for (const std::string& text : injections) {
    auto inj = parse_injection(text);
    if (!inj) return "--inject: expected exit|kill|stall|desync@RANK:STEP, got '" + text + "'";
    cfg->injections.push_back(*inj);
  }
  for (const std::string& text : delays) {
    auto d = parse_delay(text);
    if (!d) return "--delay: expected RANK:DURATION (e.g. 2:5ms), got '" + text + "'";
    cfg->delays.push_back(*d);
  }
  return "";
}

}  // namespace

const char* kind_name(Kind k) { return kKindNames[static_cast<int>(k)]; }

std::optional<Kind> parse_kind(std::string_view name) {
  for (int k = 0; k < kNumKinds; ++k)
    if (name == kKindNames[k]) return static_cast<Kind>(k);
  return std::nullopt;
}

int dim_index(std::string_view name) {
  for (int d = 0; d < kNumDims; ++d)
    if (name == kDimNames[d]) return d;
  return -1;
}

std::optional<Injection> parse_injection(const std::string& text) {
  const auto at = text.find('@');
  const auto colon = text.find(':', at == std::string::npos ? 0 : at);
  if (at == std::string::npos || colon == std::string::npos) return std::nullopt;
  const std::string what = text.substr(0, at);
  Injection inj{};
  if (what == "exit") inj.what = Injection::What::kExit;
  else if (what == "kill") inj.what = Injection::What::kKill;
  else if (what == "stall") inj.what = Injection::What::kStall;
  else if (what == "desync") inj.what = Injection::What::kDesync;
  else return std::nullopt;
  std::string_view rank(text.data() + at + 1, colon - at - 1);
  std::string_view step(text.data() + colon + 1, text.size() - colon - 1);
  if (!parse_number(rank, &inj.rank) || !parse_number(step, &inj.step) || inj.rank < 0 ||
      inj.step < 0)
    return std::nullopt;
  return inj;
}

std::optional<Delay> parse_delay(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) return std::nullopt;
  Delay d{};
  std::chrono::milliseconds ms{0};
  const std::string dur = text.substr(colon + 1);
  if (!parse_number(std::string_view(text.data(), colon), &d.rank) || d.rank < 0) return std::nullopt;
  // Microsecond resolution for "500us"; the shared parser works in milliseconds.
  if (dur.size() > 2 && dur.substr(dur.size() - 2) == "us") {
    long long us = 0;
    if (!parse_number(std::string_view(dur.data(), dur.size() - 2), &us)) return std::nullopt;
    d.delay = std::chrono::microseconds(us);
    return d;
  }
  if (!chorus_tools::parse_duration(dur, &ms)) return std::nullopt;
  d.delay = ms;
  return d;
}

std::optional<std::vector<GroupSpec>> parse_groups(const std::string& text) {
  std::vector<GroupSpec> out;
  bool have_rest = false;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    std::size_t end = text.find(',', begin);
    if (end == std::string::npos) end = text.size();
    std::string_view item(text.data() + begin, end - begin);
    const auto eq = item.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    const int dim = dim_index(item.substr(0, eq));
    if (dim < 0) return std::nullopt;
    for (const GroupSpec& g : out)
      if (g.dim == dim) return std::nullopt;
    std::string_view value = item.substr(eq + 1);
    GroupSpec g{dim, 0};
    if (value == "rest") {
      if (have_rest) return std::nullopt;
      have_rest = true;
    } else if (!parse_number(value, &g.size) || g.size < 1) {
      return std::nullopt;
    }
    out.push_back(g);
    begin = end + 1;
  }
  return out;
}

int parse_args(int argc, char** argv, StressConfig* cfg) {
  CLI::App app{"Stress Chorus with a dense mixed load, every result checked exactly. Run under "
               "a launcher, e.g. chorus-run -n 8 chorus-stress --duration 30s"};
  std::string pattern = "5d", size = "4M", duration, log_interval = "10s", timeout, skew = "0ms",
              groups;
  std::vector<std::string> injections, delays;
  app.add_option("--pattern", pattern,
                 "5d (tp/dp all_reduce, ep all_to_all, sp/pp all_gather on five streams), "
                 "random, or one collective: all_reduce, all_gather, reduce_scatter, "
                 "all_to_all, broadcast")->capture_default_str();
  app.add_option("--size", size, "Bytes per operation (K/M/G suffixes), nccl-tests convention")
      ->check(chorus_tools::bytes_validator())->capture_default_str();
  app.add_option("--steps", cfg->steps, "Stop after this many steps (default 100 without --duration)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 62));
  app.add_option("--duration", duration,
                 "Stop when this much time has passed (30s, 24h); all ranks agree at each step "
                 "boundary, so they stop together")->check(chorus_tools::duration_validator());
  app.add_option("--log-interval", log_interval, "Rank 0 prints a progress line this often")
      ->check(chorus_tools::duration_validator())->capture_default_str();
  app.add_option("--timeout", timeout, "Per-operation deadline (Options::timeout)")
      ->check(chorus_tools::duration_validator());
  app.add_option("--seed", cfg->seed, "Seed of the random pattern (the same on every rank)")
      ->capture_default_str();
  app.add_option("--groups", groups,
                 "Sub-communicator per dimension, first varies fastest: e.g. tp=2,dp=rest; "
                 "unlisted dimensions use all ranks");
  app.add_flag("--serial", cfg->serial,
               "Issue the same operations as blocking calls one after another (no streams)");
  app.add_flag("--unsafe-local-deadline", cfg->unsafe_local_deadline,
               "Each rank stops on its own clock without agreeing (the naive loop; "
               "demonstrates the failure and its report)");
  app.add_option("--deadline-skew", skew,
                 "With --unsafe-local-deadline: rank r stops r times this much later")
      ->check(chorus_tools::duration_validator())->capture_default_str();
  app.add_option("--inject", injections,
                 "Fault: exit@RANK:STEP, kill@RANK:STEP, stall@RANK:STEP or desync@RANK:STEP "
                 "(repeatable)");
  app.add_option("--delay", delays,
                 "RANK:DURATION: that rank sleeps this long before every step, a straggler "
                 "on purpose (e.g. 2:5ms; repeatable)");
  app.add_flag("--stats", cfg->stats,
               "Collect per-operation statistics (Communicator::stats) and print rank 0's at the end");
  app.add_option("--json", cfg->json_path, "Rank 0 writes the per-op summary here as JSON");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  std::string error =
      finish(pattern, size, duration, log_interval, timeout, skew, groups, injections, delays,
             cfg);
  if (!error.empty()) {
    std::cerr << error << "\nRun with --help for more information.\n";
    return 2;
  }
  return -1;
}

}  // namespace chorus_stress
