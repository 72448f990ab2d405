#include "util/function_ref.h"

#include <gtest/gtest.h>

#include <string>

namespace chorus::util {
namespace {

int call_twice(FunctionRef<int(int)> f) { return f(1) + f(2); }

TEST(FunctionRef, CallsTheCallableItReferencesWithArgumentsAndResult) {
  int calls = 0;
  auto add_ten = [&calls](int x) {
    ++calls;
    return x + 10;
  };
  EXPECT_EQ(call_twice(add_ten), 23);
  EXPECT_EQ(calls, 2);
  // A lambda written in the argument list lives until the call returns.
  EXPECT_EQ(call_twice([](int x) { return x * x; }), 5);
}

TEST(FunctionRef, ReferencesTheCallableNotACopyOfIt) {
  std::string seen;
  struct Recorder {
    std::string* out;
    int n = 0;
    void operator()() { *out += std::to_string(++n); }
  } rec{&seen};
  FunctionRef<void()> f(rec);
  f();
  f();
  EXPECT_EQ(seen, "12");
  EXPECT_EQ(rec.n, 2);  // the state lives in `rec` itself
}

}  // namespace
}  // namespace chorus::util
