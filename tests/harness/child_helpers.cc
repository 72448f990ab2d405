// Helpers for test bodies running inside rank processes: checks, expected errors,
// a clean launcher environment and free ports.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "rank_runner.h"

extern char** environ;

namespace chorus::testing {

void check(bool cond, const std::string& message) {
  if (!cond) throw CheckFailure(message);
}

Error expect_error(ErrorCode code, const std::function<void()>& fn, std::string_view must_contain) {
  try {
    fn();
  } catch (const Error& e) {
    if (e.code() != code) {
      throw CheckFailure("expected chorus::Error " + std::string(to_string(code)) + ", got " +
                         e.what());
    }
    if (e.message().find(must_contain) == std::string::npos) {
      throw CheckFailure("expected the message of chorus::Error " + std::string(to_string(code)) +
                         " to contain \"" + std::string(must_contain) + "\", got: " + e.what());
    }
    return e;
  } catch (const CheckFailure&) {
    throw;
  } catch (const std::exception& e) {
    throw CheckFailure("expected chorus::Error " + std::string(to_string(code)) +
                       ", got exception: " + e.what());
  }
  throw CheckFailure("expected chorus::Error " + std::string(to_string(code)) +
                     ", but the call succeeded");
}

void clear_launcher_env() {
  static const char* const kPrefixes[] = {"CHORUS_", "OMPI_", "PMI_", "PMIX_", "SLURM_",
                                          "MPI_LOCAL", "HYDRA_", "TORCHELASTIC_"};
  static const char* const kNames[] = {"RANK",       "WORLD_SIZE",       "LOCAL_RANK",
                                       "LOCAL_WORLD_SIZE", "GROUP_RANK", "MASTER_ADDR",
                                       "MASTER_PORT", "NODE_RANK"};
  std::vector<std::string> doomed;
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    std::string name = kv.substr(0, kv.find('='));
    bool hit = false;
    for (const char* p : kPrefixes) hit = hit || name.rfind(p, 0) == 0;
    for (const char* n : kNames) hit = hit || name == n;
    // Keep the library's own tuning knobs (CHORUS_DEBUG, CHORUS_TIMEOUT...) except the
    // launcher ones.
    if (hit && name.rfind("CHORUS_", 0) == 0) {
      hit = name == "CHORUS_RANK" || name == "CHORUS_WORLD_SIZE" || name == "CHORUS_LOCAL_RANK" ||
            name == "CHORUS_STORE_ADDR" || name == "CHORUS_JOB_ID";
    }
    if (hit) doomed.push_back(name);
  }
  for (const auto& n : doomed) unsetenv(n.c_str());
}

namespace {
// Binds 127.0.0.1:port (0 = any); returns the bound port or -1. Closes the socket.
int try_bind(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int result = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
    socklen_t len = sizeof a;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) result = ntohs(a.sin_port);
  }
  close(fd);
  return result;
}
}  // namespace

int pick_free_port(bool pair) {
  for (int attempt = 0; attempt < 200; ++attempt) {
    int p = try_bind(0);
    if (p <= 0 || p >= 65535) continue;
    if (!pair || try_bind(p + 1) == p + 1) return p;
  }
  return -1;
}

}  // namespace chorus::testing
