// Checks every #include "..." in src/, tools/ and python/src/ against the allowed dependency table of
// docs/ARCHITECTURE.md: a room may include only itself and the rooms below it; and every
// #include in python/torch/ (the torch backend: public API, torch, pybind11 and its own files).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>

namespace fs = std::filesystem;

namespace {

// room -> rooms it may include (besides itself and the public include/chorus headers);
// docs/ARCHITECTURE.md ("Arrows") shows the same table.
const std::map<std::string, std::set<std::string>>& allowed() {
  static const std::map<std::string, std::set<std::string>> table = {
      {"util", {}},
      {"config", {"util"}},
      {"diag", {"util", "config"}},
      {"kernels", {"util"}},
      {"net", {"util", "diag"}},
      {"transport", {"util"}},
      {"transport/engine", {"util", "diag", "transport"}},
      {"transport/tcp", {"util", "diag", "transport", "transport/engine", "net"}},
      {"transport/shm", {"util", "diag", "transport", "transport/engine"}},
      {"transport/testing", {"util", "transport"}},
      {"op", {"util", "transport"}},
      {"algo", {"util", "transport", "kernels", "transport/testing", "op"}},
      {"bootstrap", {"util", "config", "diag", "net"}},
      {"core", {"util", "config", "diag", "net", "transport", "transport/tcp", "transport/shm",
                "algo", "bootstrap", "kernels", "op"}},
      {"api", {"util", "config", "diag", "bootstrap", "core", "kernels", "op"}},
  };
  return table;
}

// Single headers a room may include from a room it may not: the table's defaults as
// constants (config/defaults.h) for the option structs of the transports and of op.
const std::map<std::string, std::set<std::string>>& allowed_headers() {
  static const std::map<std::string, std::set<std::string>> table = {
      {"transport/tcp", {"config/defaults.h"}},
      {"transport/shm", {"config/defaults.h"}},
      {"op", {"config/defaults.h"}},
  };
  return table;
}

// The room of an included path such as "transport/tcp/frame.h" or "algo/ring.h".
std::string room_of(const std::string& include) {
  for (const char* sub : {"transport/engine/", "transport/tcp/", "transport/shm/", "transport/testing/"})
    if (include.rfind(sub, 0) == 0) return std::string(sub).substr(0, std::string(sub).size() - 1);
  return include.substr(0, include.find('/'));
}

TEST(LayeringTest, RoomsIncludeOnlyRoomsBelowThem) {
  const fs::path src = fs::path(CHORUS_SOURCE_DIR) / "src";
  const std::regex include_re("^\\s*#\\s*include\\s+\"([^\"]+)\"");
  int files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(src)) {
    const auto ext = entry.path().extension();
    if (ext != ".cc" && ext != ".h") continue;
    const std::string rel = fs::relative(entry.path().parent_path(), src).string();
    ASSERT_TRUE(allowed().count(rel)) << "room " << rel << " is missing from the layering table";
    const auto& ok = allowed().at(rel);
    std::ifstream in(entry.path());
    std::string line;
    ++files;
    while (std::getline(in, line)) {
      std::smatch m;
      if (!std::regex_search(line, m, include_re)) continue;
      const std::string inc = m[1];
      if (inc.rfind("chorus/", 0) == 0) continue;  // public headers
      const std::string room = room_of(inc);
      if (rel == "api" && inc == "core/comm_impl.h")
        ADD_FAILURE() << entry.path().string() << ": api reaches a communicator only through "
                      << "core/comm.h, never core/comm_impl.h";
      if (room == rel || ok.count(room)) continue;
      if (allowed_headers().count(rel) && allowed_headers().at(rel).count(inc)) continue;
      ADD_FAILURE() << entry.path().string() << " (room " << rel << ") includes \"" << inc
                    << "\" from room " << room;
    }
  }
  EXPECT_GT(files, 20);
}

// The tools and the Python module's bindings include only include/chorus and their own files.
TEST(LayeringTest, ToolsUseOnlyThePublicApi) {
  const std::regex include_re("^\\s*#\\s*include\\s+\"([^\"]+)\"");
  for (const char* dir : {"tools", "python/src"}) {
    int files = 0;
    for (const auto& entry : fs::recursive_directory_iterator(fs::path(CHORUS_SOURCE_DIR) / dir)) {
      const auto ext = entry.path().extension();
      if (ext != ".cc" && ext != ".h" && ext != ".cpp") continue;
      ++files;
      std::ifstream in(entry.path());
      std::string line;
      while (std::getline(in, line)) {
        std::smatch m;
        if (!std::regex_search(line, m, include_re)) continue;
        const std::string inc = m[1];
        EXPECT_FALSE(allowed().count(room_of(inc)))
            << entry.path().string() << " includes internal header \"" << inc << "\"";
      }
    }
    EXPECT_GT(files, 5) << dir;
  }
}

// The torch backend includes the public headers (chorus/...) and its own files with quotes,
// and with angle brackets only the standard library, torch (torch/, ATen/, c10/) and pybind11.
TEST(LayeringTest, TorchBackendUsesOnlyThePublicApi) {
  const fs::path dir = fs::path(CHORUS_SOURCE_DIR) / "python" / "torch";
  const std::regex include_re("^\\s*#\\s*include\\s*([\"<])([^\">]+)[\">]");
  const std::set<std::string> outside = {"torch", "ATen", "c10", "pybind11"};
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const auto ext = entry.path().extension();
    if (ext != ".cc" && ext != ".h") continue;
    ++files;
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) {
      std::smatch m;
      if (!std::regex_search(line, m, include_re)) continue;
      const std::string inc = m[2];
      const std::size_t slash = inc.find('/');
      bool ok;
      if (m[1] == "\"") {
        ok = inc.rfind("chorus/", 0) == 0 ||
             (slash == std::string::npos && fs::exists(dir / inc));  // its own header
      } else {
        ok = slash == std::string::npos || outside.count(inc.substr(0, slash));
      }
      EXPECT_TRUE(ok) << entry.path().string() << " includes " << m[1] << inc
                      << (m[1] == "\"" ? "\"" : ">")
                      << ": the torch backend may include only chorus/ public headers, its own "
                         "files, the standard library, torch and pybind11";
    }
  }
  EXPECT_GT(files, 5);
}

TEST(LayeringTest, OnlyConfigReadsTheEnvironment) {
  const fs::path src = fs::path(CHORUS_SOURCE_DIR) / "src";
  for (const auto& entry : fs::recursive_directory_iterator(src)) {
    const auto ext = entry.path().extension();
    if (ext != ".cc" && ext != ".h") continue;
    if (entry.path().filename().string().find("_test") != std::string::npos) continue;
    if (fs::relative(entry.path().parent_path(), src) == "config") continue;
    std::ifstream in(entry.path());
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text.find("getenv("), std::string::npos) << entry.path().string() << " calls getenv";
  }
}

}  // namespace
