// chorus-run --bind: the units of an affinity mask, on made-up topologies.
#include <gtest/gtest.h>

#include <initializer_list>

#include "binding.h"

namespace chorus_run {
namespace {

cpu_set_t set_of(std::initializer_list<int> cpus) {
  cpu_set_t s;
  CPU_ZERO(&s);
  for (int c : cpus) CPU_SET(c, &s);
  return s;
}

std::vector<std::string> lists(const std::vector<cpu_set_t>& units) {
  std::vector<std::string> out;
  for (const cpu_set_t& u : units) out.push_back(cpu_list(u));
  return out;
}

// Two packages of two cores with two hardware threads each, numbered the way Linux
// commonly does: processors 0-3 are the first threads of the four cores, 4-7 the second.
CoreId smt_host(int cpu) { return CoreId{cpu % 4 / 2, cpu % 2}; }

TEST(BindUnits, ParsesTheThreeModes) {
  Bind b = Bind::kCpu;
  EXPECT_TRUE(parse_bind("none", &b));
  EXPECT_EQ(b, Bind::kNone);
  EXPECT_TRUE(parse_bind("core", &b));
  EXPECT_EQ(b, Bind::kCore);
  EXPECT_TRUE(parse_bind("cpu", &b));
  EXPECT_EQ(b, Bind::kCpu);
  EXPECT_FALSE(parse_bind("socket", &b));
  EXPECT_FALSE(parse_bind("", &b));
}

TEST(BindUnits, NoneBindsNothing) {
  EXPECT_TRUE(bind_units(Bind::kNone, set_of({0, 1, 2}), smt_host).empty());
}

TEST(BindUnits, CoresGatherTheirThreadsInOrderOfTheirLowestProcessor) {
  const cpu_set_t all = set_of({0, 1, 2, 3, 4, 5, 6, 7});
  EXPECT_EQ(lists(bind_units(Bind::kCore, all, smt_host)),
            (std::vector<std::string>{"0,4", "1,5", "2,6", "3,7"}));
  EXPECT_EQ(lists(bind_units(Bind::kCpu, all, smt_host)),
            (std::vector<std::string>{"0", "1", "2", "3", "4", "5", "6", "7"}));
}

TEST(BindUnits, OnlyTheMaskCounts) {
  // A launcher confined to processors 1, 4, 5: core (0,0) keeps 4, core (0,1) keeps 1,5.
  EXPECT_EQ(lists(bind_units(Bind::kCore, set_of({1, 4, 5}), smt_host)),
            (std::vector<std::string>{"1,5", "4"}));
  EXPECT_TRUE(bind_units(Bind::kCore, set_of({}), smt_host).empty());
}

TEST(BindUnits, UnknownTopologyMakesEveryProcessorACore) {
  auto unknown = [](int cpu) { return CoreId{-1, cpu}; };
  EXPECT_EQ(lists(bind_units(Bind::kCore, set_of({0, 1, 2}), unknown)),
            (std::vector<std::string>{"0", "1", "2"}));
}

TEST(BindUnits, RanksWrapAroundTheUnits) {
  const auto units = bind_units(Bind::kCpu, set_of({2, 3}), smt_host);
  EXPECT_EQ(cpu_list(unit_of_rank(units, 0)), "2");
  EXPECT_EQ(cpu_list(unit_of_rank(units, 1)), "3");
  EXPECT_EQ(cpu_list(unit_of_rank(units, 2)), "2");
  EXPECT_EQ(cpu_list(unit_of_rank(units, 5)), "3");
}

TEST(BindUnits, ListsRunsOfProcessors) {
  EXPECT_EQ(cpu_list(set_of({0, 1, 2, 3, 8, 10, 11})), "0-3,8,10-11");
  EXPECT_EQ(cpu_list(set_of({})), "");
}

}  // namespace
}  // namespace chorus_run
