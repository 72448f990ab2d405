// Tests of the parameter table: parsing, validation, Options over the environment, and
// docs/CONFIG.md matching the table row for row.
#include "config/config.h"
#include "config/defaults.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace chorus::config {
namespace {

using Vars = std::map<std::string, std::string>;
using std::chrono::milliseconds;

TEST(ConfigTest, DefaultsApplyWhenUnset) {
  MapEnvironment env;
  auto c = load(env);
  ASSERT_TRUE(c.has_value()) << c.status().to_string();
  EXPECT_EQ(*c->timeout, milliseconds(300000));
  EXPECT_EQ(*c->connect_timeout, milliseconds(60000));
  EXPECT_EQ(*c->chunk_bytes, 1u << 20);
  EXPECT_EQ(c->transport, Transport::kAuto);
  EXPECT_EQ(c->hang_report, HangReport::kRank0);
  EXPECT_EQ(c->flight_recorder_format, RecorderFormat::kText);
  EXPECT_EQ(c->debug, LogLevel::kWarn);
  EXPECT_EQ(c->debug_subsys, kAllSubsys);
  EXPECT_EQ(c->kernel_isa, KernelIsa::kAuto);
  EXPECT_TRUE(c->desync_check);
  EXPECT_FALSE(c->stats);
  EXPECT_FALSE(c->rank.has_value());
}

TEST(ConfigTest, ParsesSetValuesWithSuffixes) {
  MapEnvironment env({{"CHORUS_TIMEOUT", "5"}, {"CHORUS_CHUNK_SIZE", "256K"},
                      {"CHORUS_ALGO", "all_reduce:ring"}, {"CHORUS_RANK", "3"}});
  auto c = load(env);
  ASSERT_TRUE(c.has_value()) << c.status().to_string();
  EXPECT_EQ(*c->timeout, milliseconds(5000));
  EXPECT_EQ(*c->chunk_bytes, 256u << 10);
  EXPECT_EQ(c->algo, "all_reduce:ring");
  EXPECT_EQ(*c->rank, 3);
}

TEST(ConfigTest, ParsesTheClosedSets) {
  MapEnvironment env({{"CHORUS_TRANSPORT", "shm"}, {"CHORUS_HANG_REPORT", "all"},
                      {"CHORUS_FLIGHT_RECORDER_FORMAT", "json"}, {"CHORUS_DEBUG", "info"},
                      {"CHORUS_DEBUG_SUBSYS", "INIT, net"}, {"CHORUS_KERNEL_ISA", "sse"}});
  auto c = load(env);
  ASSERT_TRUE(c.has_value()) << c.status().to_string();
  EXPECT_EQ(c->transport, Transport::kShm);
  EXPECT_EQ(c->hang_report, HangReport::kAll);
  EXPECT_EQ(c->flight_recorder_format, RecorderFormat::kJson);
  EXPECT_EQ(c->debug, LogLevel::kInfo);  // CHORUS_DEBUG ignores case
  EXPECT_EQ(c->debug_subsys, unsigned(LogSubsys::kInit) | unsigned(LogSubsys::kNet));
  EXPECT_EQ(c->kernel_isa, KernelIsa::kSse);
  EXPECT_STREQ(name_of(c->transport), "shm");
  EXPECT_EQ(subsys_list_name(c->debug_subsys), "INIT,NET");
}

TEST(ConfigTest, EmptyValueMeansTheDefaultExceptForStringsAndBools) {
  MapEnvironment env({{"CHORUS_TRANSPORT", ""}, {"CHORUS_HANG_REPORT", ""},
                      {"CHORUS_TIMEOUT", ""}, {"CHORUS_SINGLE_COPY", ""},
                      {"CHORUS_COST_MODEL", ""}});
  auto c = load(env);
  ASSERT_TRUE(c.has_value()) << c.status().to_string();
  EXPECT_EQ(c->transport, Transport::kAuto);
  EXPECT_EQ(c->hang_report, HangReport::kRank0);
  EXPECT_EQ(*c->timeout, milliseconds(300000));
  EXPECT_FALSE(c->single_copy);
  EXPECT_EQ(c->cost_model, "");
}

TEST(ConfigTest, BadValueNamesTheVariable) {
  MapEnvironment env(Vars{{"CHORUS_TIMEOUT", "soon"}});
  auto c = load(env);
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("CHORUS_TIMEOUT"), std::string::npos);
  EXPECT_NE(c.status().message().find("soon"), std::string::npos);
}

TEST(ConfigTest, BadEnumValueListsTheChoices) {
  auto c = load(MapEnvironment(Vars{{"CHORUS_HANG_REPORT", "loud"}}));
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("CHORUS_HANG_REPORT='loud'"), std::string::npos)
      << c.status().message();
  EXPECT_NE(c.status().message().find("rank0, all, none"), std::string::npos);
}

TEST(ConfigTest, RejectsNonPositiveTimeoutAndBadSize) {
  EXPECT_EQ(load(MapEnvironment(Vars{{"CHORUS_TIMEOUT", "0"}})).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(load(MapEnvironment(Vars{{"CHORUS_SPIN_US", "-1"}})).status().code(),
            ErrorCode::kInvalidArgument);
  auto c = load(MapEnvironment(Vars{{"CHORUS_CHUNK_SIZE", "12Q"}}));
  ASSERT_FALSE(c.has_value());
  EXPECT_NE(c.status().message().find("CHORUS_CHUNK_SIZE"), std::string::npos);
}

TEST(ConfigTest, OptionsWinOverTheEnvironment) {
  auto env = load(MapEnvironment(Vars{{"CHORUS_TRANSPORT", "tcp"}, {"CHORUS_CHUNK_SIZE", "4K"}}));
  ASSERT_TRUE(env.has_value());
  Options o;
  o.transport = Transport::kShm;
  o.timeout = milliseconds(1500);
  auto c = with_options(*env, o);
  ASSERT_TRUE(c.has_value()) << c.status().to_string();
  EXPECT_EQ(c->transport, Transport::kShm);
  EXPECT_EQ(*c->timeout, milliseconds(1500));
  EXPECT_EQ(*c->chunk_bytes, 4096u);  // not set in Options: the environment's
}

TEST(ConfigTest, BadOptionValueNamesTheField) {
  auto env = load(MapEnvironment());
  ASSERT_TRUE(env.has_value());
  Options o;
  o.chunk_bytes = 0;
  auto c = with_options(*env, o);
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("Options::chunk_bytes"), std::string::npos);
  Options bad_enum;
  bad_enum.transport = static_cast<Transport>(42);
  EXPECT_EQ(with_options(*env, bad_enum).status().code(), ErrorCode::kInvalidArgument);
}

TEST(ConfigTest, SetOptionParsesTheVariablesText) {
  Options o;
  ASSERT_TRUE(parse_option(o, "chunk_bytes", "256K").is_ok());
  ASSERT_TRUE(parse_option(o, "transport", "tcp").is_ok());
  ASSERT_TRUE(parse_option(o, "single_copy", "0").is_ok());
  ASSERT_TRUE(parse_option(o, "timeout", "7").is_ok());
  ASSERT_TRUE(parse_option(o, "algo", "ring").is_ok());
  EXPECT_EQ(*o.chunk_bytes, 256u << 10);
  EXPECT_EQ(*o.transport, Transport::kTcp);
  EXPECT_FALSE(*o.single_copy);
  EXPECT_EQ(*o.timeout, milliseconds(7000));
  EXPECT_EQ(*o.algo, "ring");
  Status s = parse_option(o, "transport", "carrier pigeon");
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("Options::transport"), std::string::npos);
  EXPECT_EQ(parse_option(o, "no_such_field", "1").code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(parse_option(o, "debug", "INFO").code(), ErrorCode::kInvalidArgument)
      << "process-wide settings are not Options";
}

// config::defaults (for the rooms' option structs) are the table's defaults.
TEST(ConfigTest, CompileTimeDefaultsMatchTheLoadedOnes) {
  auto c = load(MapEnvironment());
  ASSERT_TRUE(c.has_value());
#define CHORUS_PARAM(field, NAME, type, scope, def, unit, doc) CHORUS_CHECK_##type(field)
#define CHORUS_CHECK_kBytes(field) EXPECT_EQ(*c->field, defaults::field) << #field;
#define CHORUS_CHECK_kInt(field) EXPECT_EQ(c->field.value_or(0), defaults::field) << #field;
#define CHORUS_CHECK_kBool(field) EXPECT_EQ(c->field, defaults::field) << #field;
#define CHORUS_CHECK_kSeconds(field)
#define CHORUS_CHECK_kString(field)
#define CHORUS_CHECK_kTransport(field)
#define CHORUS_CHECK_kHangReport(field)
#define CHORUS_CHECK_kRecorderFormat(field)
#define CHORUS_CHECK_kLogLevel(field)
#define CHORUS_CHECK_kLogSubsys(field)
#define CHORUS_CHECK_kKernelIsa(field)
#include "config/params.def"
#undef CHORUS_PARAM
}

// Each row of docs/CONFIG.md's table is the table's row: name, type, default, Options
// field, unit and description.
std::string doc_row(const ParamDesc& p) {
  std::string def = *p.default_value ? p.default_value : "(unset)";
  std::string where = p.scope == Scope::kComm ? std::string("`") + p.field + "`"
                                              : std::string("(") + to_string(p.scope) + ")";
  return std::string("| `") + p.name + "` | " + to_string(p.type) + " | " + def + " | " +
         where + " | " + p.unit + " | " + p.doc + " |";
}

TEST(ConfigTest, ConfigMdHasEveryRowOfTheTable) {
  std::ifstream in(CHORUS_SOURCE_DIR "/docs/CONFIG.md");
  ASSERT_TRUE(in.good()) << "docs/CONFIG.md is missing";
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  for (const auto& p : params())
    EXPECT_NE(doc.find(doc_row(p) + "\n"), std::string::npos)
        << p.name << ": docs/CONFIG.md should have the row\n" << doc_row(p);
}

}  // namespace
}  // namespace chorus::config
