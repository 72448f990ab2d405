// Tests of the parameter table: parsing, validation, and docs/CONFIG.md coverage.
#include "config/config.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace chorus::config {
namespace {

using Vars = std::map<std::string, std::string>;

TEST(ConfigTest, DefaultsApplyWhenUnset) {
  MapEnvironment env;
  auto c = load(env);
  ASSERT_TRUE(c.has_value()) << c.status().to_string();
  EXPECT_EQ(*c->timeout_s, 300);
  EXPECT_EQ(*c->connect_timeout_s, 60);
  EXPECT_EQ(*c->chunk_bytes, 1u << 20);
  EXPECT_EQ(c->transport, "auto");
  EXPECT_FALSE(c->rank.has_value());
}

TEST(ConfigTest, ParsesSetValuesWithSuffixes) {
  MapEnvironment env({{"CHORUS_TIMEOUT", "5"}, {"CHORUS_CHUNK_SIZE", "256K"},
                      {"CHORUS_ALGO", "all_reduce:ring"}, {"CHORUS_RANK", "3"}});
  auto c = load(env);
  ASSERT_TRUE(c.has_value()) << c.status().to_string();
  EXPECT_EQ(*c->timeout_s, 5);
  EXPECT_EQ(*c->chunk_bytes, 256u << 10);
  EXPECT_EQ(c->algo, "all_reduce:ring");
  EXPECT_EQ(*c->rank, 3);
}

TEST(ConfigTest, BadValueNamesTheVariable) {
  MapEnvironment env(Vars{{"CHORUS_TIMEOUT", "soon"}});
  auto c = load(env);
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("CHORUS_TIMEOUT"), std::string::npos);
  EXPECT_NE(c.status().message().find("soon"), std::string::npos);
}

TEST(ConfigTest, RejectsNonPositiveTimeoutAndBadSize) {
  EXPECT_EQ(load(MapEnvironment(Vars{{"CHORUS_TIMEOUT", "0"}})).status().code(),
            ErrorCode::kInvalidArgument);
  auto c = load(MapEnvironment(Vars{{"CHORUS_CHUNK_SIZE", "12Q"}}));
  ASSERT_FALSE(c.has_value());
  EXPECT_NE(c.status().message().find("CHORUS_CHUNK_SIZE"), std::string::npos);
}

TEST(ConfigTest, EveryParamIsDocumentedInConfigMd) {
  std::ifstream in(CHORUS_SOURCE_DIR "/docs/CONFIG.md");
  ASSERT_TRUE(in.good()) << "docs/CONFIG.md is missing";
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  for (const auto& p : params())
    EXPECT_NE(doc.find(std::string("`") + p.name + "`"), std::string::npos)
        << p.name << " has no row in docs/CONFIG.md";
}

}  // namespace
}  // namespace chorus::config
