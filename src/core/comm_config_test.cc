// CommConfig from the table plus Options: every row of the table, fed a bad value, fails
// with kInvalidArgument naming its variable; Options win; defaults come from the table.
#include "core/comm_config.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace chorus::core {
namespace {

using config::ParamType;
using std::chrono::milliseconds;

// String rows with no value config or core can refuse: a name, a path or an address,
// checked (if at all) when it is used.
const std::set<std::string>& free_strings() {
  static const std::set<std::string> names = {
      "CHORUS_TUNING_FILE",    // a path; unwritable = a warning, by design (docs/CONFIG.md)
      "CHORUS_TUNING_TABLE",   // a path; unreadable fails init at the rendezvous (rank 0)
      "CHORUS_SOCKET_ADDR",    // an address; a bad one fails init when TCP binds
      "CHORUS_SOCKET_IFNAME",  // an interface; an unknown one fails init when TCP binds
      "CHORUS_HOST_ID",        // any text
      "CHORUS_DEBUG_FILE",     // a path pattern
      "CHORUS_STORE_ADDR",     // host:port, checked by init_from_env's launcher detection
      "CHORUS_JOB_ID",         // any text
      "CHORUS_TIMELINE",       // a path pattern
  };
  return names;
}

// A value each row must refuse.
std::string bad_value(const config::ParamDesc& p) {
  static const std::map<std::string, std::string> strings = {
      {"CHORUS_ALGO", "all_reduce:no_such_algo"},
      {"CHORUS_COST_MODEL", "no_such_collective"},
      {"CHORUS_PLACEMENT", "far"},
  };
  switch (p.type) {
    case ParamType::kInt: return "twelve";
    case ParamType::kBytes: return "12Q";
    case ParamType::kSeconds: return "soon";
    case ParamType::kBool: return "maybe";
    case ParamType::kLogSubsys: return "INIT,NOISE";
    case ParamType::kString: {
      auto it = strings.find(p.name);
      return it == strings.end() ? "" : it->second;
    }
    default: return "bogus";  // every closed set
  }
}

Result<CommConfig> resolve_env(const config::Environment& env, const Options& o = {}) {
  CHORUS_ASSIGN_OR_RETURN(config::Config cfg, config::load(env));
  return resolve_config(o, cfg);
}

TEST(CommConfigTest, EveryRowRefusesABadValueNamingTheVariable) {
  int checked = 0;
  for (const auto& p : config::params()) {
    if (free_strings().count(p.name)) {
      EXPECT_EQ(p.type, ParamType::kString) << p.name << " is listed as a free string";
      continue;
    }
    const std::string bad = bad_value(p);
    ASSERT_FALSE(bad.empty()) << p.name << ": a string row needs a bad value here or a place "
                              << "in free_strings()";
    config::MapEnvironment env;
    env.set(p.name, bad);
    auto c = resolve_env(env);
    ASSERT_FALSE(c.has_value()) << p.name << "=" << bad << " was accepted";
    EXPECT_EQ(c.status().code(), ErrorCode::kInvalidArgument) << p.name;
    EXPECT_NE(c.status().message().find(p.name), std::string::npos)
        << p.name << ": " << c.status().message();
    ++checked;
  }
  EXPECT_EQ(checked + static_cast<int>(free_strings().size()),
            static_cast<int>(config::params().size()));
}

TEST(CommConfigTest, DefaultsComeFromTheTable) {
  auto c = resolve_env(config::MapEnvironment());
  ASSERT_TRUE(c.has_value()) << c.status().to_string();
  EXPECT_EQ(c->timeout, milliseconds(300000));
  EXPECT_EQ(c->transport, Transport::kAuto);  // the table's, not "tcp"
  EXPECT_EQ(c->chunk_bytes, std::size_t{1} << 20);
  EXPECT_EQ(c->hang_report, HangReport::kRank0);
  EXPECT_EQ(c->flight_recorder_size, 64);
  EXPECT_EQ(c->cost_model, "auto");
  EXPECT_TRUE(c->desync_check);
  EXPECT_FALSE(c->stats);
  EXPECT_FALSE(c->print_stats);
}

TEST(CommConfigTest, OptionsWinAndTheEnvironmentFillsTheRest) {
  config::MapEnvironment env({{"CHORUS_TRANSPORT", "tcp"}, {"CHORUS_SPIN_US", "7"},
                              {"CHORUS_STATS", "1"}});
  Options o;
  o.transport = Transport::kShm;
  o.timeout = milliseconds(2500);
  o.hang_report = HangReport::kNone;
  auto c = resolve_env(env, o);
  ASSERT_TRUE(c.has_value()) << c.status().to_string();
  EXPECT_EQ(c->transport, Transport::kShm);
  EXPECT_EQ(c->timeout, milliseconds(2500));
  EXPECT_EQ(c->hang_report, HangReport::kNone);
  EXPECT_EQ(c->spin_us, 7);
  EXPECT_TRUE(c->stats);
  EXPECT_TRUE(c->print_stats);  // CHORUS_STATS=1 prints the tables
}

TEST(CommConfigTest, StatsThroughOptionsCollectWithoutPrinting) {
  Options on;
  on.stats = true;
  auto c = resolve_env(config::MapEnvironment(), on);
  ASSERT_TRUE(c.has_value());
  EXPECT_TRUE(c->stats);
  EXPECT_FALSE(c->print_stats);
  Options off;
  off.stats = false;
  c = resolve_env(config::MapEnvironment(std::map<std::string, std::string>{{"CHORUS_STATS", "1"}}), off);
  ASSERT_TRUE(c.has_value());
  EXPECT_FALSE(c->stats);
  EXPECT_FALSE(c->print_stats);
}

TEST(CommConfigTest, BadOptionsFailNamingTheField) {
  Options o;
  o.timeout = milliseconds(0);
  auto c = resolve_env(config::MapEnvironment(), o);
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("Options::timeout"), std::string::npos);
  Options a;
  a.algo = "all_reduce:no_such_algo";
  EXPECT_EQ(resolve_env(config::MapEnvironment(), a).status().code(),
            ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace chorus::core
