// One loopback TCP stream, the comparison harness's ceiling for the TCP rows: a sender
// process writes a large buffer over 127.0.0.1 to a receiver process (forked, so that the
// two sides run like two ranks), and the receiver reports the stream's GB/s.
//
//   tcp_stream [--bytes 1G] [--buffer 64M] [--sockbuf 4M] [--repeats 3] [--json PATH]
//
// --bytes: bytes streamed per repeat; --buffer: bytes per send()/recv() call (the user
// buffer, reused); --sockbuf: SO_SNDBUF/SO_RCVBUF (0 = kernel autotuning). Prints one line
// per repeat and the median; --json writes {"gbps": [...], "median_gbps": x}. The receiver
// counts every byte and, after the clock stops, compares its buffer with the pattern sent.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Args {
  std::size_t bytes = std::size_t{1} << 30;
  std::size_t buffer = std::size_t{64} << 20;
  int sockbuf = 4 << 20;
  int repeats = 3;
  std::string json;
};

bool parse_size(const char* text, std::size_t* out) {
  char* end = nullptr;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (end == text || text[0] == '-') return false;
  std::string s(end);
  int shift = s.empty() ? 0 : s == "K" ? 10 : s == "M" ? 20 : s == "G" ? 30 : -1;
  if (shift < 0) return false;
  *out = static_cast<std::size_t>(v) << shift;
  return true;
}

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "tcp_stream: %s: %s\n", what, std::strerror(errno));
  std::exit(2);
}

void tune(int fd, int sockbuf) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  if (sockbuf > 0) {
    ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sockbuf, sizeof(sockbuf));
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sockbuf, sizeof(sockbuf));
  }
}

void fill(std::vector<std::uint8_t>& buf, std::size_t offset) {
  for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<std::uint8_t>((offset + i) * 7);
}

void send_all(int fd, const Args& a) {
  std::vector<std::uint8_t> buf(a.buffer);
  fill(buf, 0);
  std::size_t sent = 0;
  while (sent < a.bytes) {
    std::size_t want = std::min(a.buffer, a.bytes - sent);
    std::size_t off = sent % a.buffer;
    want = std::min(want, a.buffer - off);
    ssize_t n = ::send(fd, buf.data() + off, want, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) die("send");
    sent += static_cast<std::size_t>(n);
  }
}

// Returns the seconds from the first byte to the last; exits 1 on wrong data.
double recv_all(int fd, const Args& a) {
  std::vector<std::uint8_t> buf(a.buffer), want(a.buffer);
  fill(want, 0);
  std::fill(buf.begin(), buf.end(), 0);
  std::size_t got = 0;
  std::chrono::steady_clock::time_point start;
  while (got < a.bytes) {
    std::size_t off = got % a.buffer;
    std::size_t room = std::min(a.buffer - off, a.bytes - got);
    ssize_t n = ::recv(fd, buf.data() + off, room, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) die("recv");
    if (got == 0) start = std::chrono::steady_clock::now();
    got += static_cast<std::size_t>(n);
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Checked after the clock stops: the last fill of the buffer, every byte (earlier fills
  // were overwritten; their count is exact, and the stream is ordered).
  std::size_t len = std::min(a.buffer, a.bytes);
  if (std::memcmp(buf.data(), want.data(), len) != 0) {
    std::fprintf(stderr, "tcp_stream: wrong bytes received\n");
    std::exit(1);
  }
  return s;
}

double one_run(const Args& a) {
  int lfd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (lfd < 0) die("socket");
  tune(lfd, a.sockbuf);  // accepted sockets inherit the buffer sizes
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) die("bind");
  if (::listen(lfd, 1) != 0) die("listen");
  socklen_t len = sizeof(addr);
  if (::getsockname(lfd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) die("getsockname");
  pid_t child = ::fork();
  if (child < 0) die("fork");
  if (child == 0) {
    ::close(lfd);
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    tune(fd, a.sockbuf);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) die("connect");
    send_all(fd, a);
    ::shutdown(fd, SHUT_WR);
    char c;
    while (::recv(fd, &c, 1, 0) > 0) {
    }
    std::_Exit(0);
  }
  int fd = ::accept(lfd, nullptr, nullptr);
  if (fd < 0) die("accept");
  ::close(lfd);
  double s = recv_all(fd, a);
  ::close(fd);
  int status = 0;
  ::waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "tcp_stream: sender failed\n");
    std::exit(2);
  }
  return static_cast<double>(a.bytes) / s / 1e9;
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    std::size_t n = 0;
    bool ok = v != nullptr;
    if (ok && k == "--bytes") ok = parse_size(v, &a.bytes) && a.bytes > 0;
    else if (ok && k == "--buffer") ok = parse_size(v, &a.buffer) && a.buffer > 0;
    else if (ok && k == "--sockbuf") ok = parse_size(v, &n) && n < (1u << 30), a.sockbuf = static_cast<int>(n);
    else if (ok && k == "--repeats") a.repeats = std::atoi(v), ok = a.repeats > 0;
    else if (ok && k == "--json") a.json = v;
    else ok = false;
    if (!ok) {
      std::fprintf(stderr,
                   "usage: %s [--bytes 1G] [--buffer 64M] [--sockbuf 4M|0] [--repeats 3] "
                   "[--json PATH]\nbad or missing value for %s\n", argv[0], k.c_str());
      std::exit(2);
    }
    ++i;
  }
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  Args a = parse(argc, argv);
  std::vector<double> runs;
  for (int r = 0; r < a.repeats; ++r) {
    runs.push_back(one_run(a));
    std::printf("tcp_stream: run %d: %.3f GB/s (%zu bytes, %zu B per call, sockbuf %d)\n", r + 1,
                runs.back(), a.bytes, a.buffer, a.sockbuf);
  }
  std::vector<double> sorted = runs;
  std::sort(sorted.begin(), sorted.end());
  double median = sorted[sorted.size() / 2];
  std::printf("tcp_stream: median %.3f GB/s\n", median);
  if (!a.json.empty()) {
    FILE* f = std::fopen(a.json.c_str(), "w");
    if (f == nullptr) die("open --json");
    std::fprintf(f, "{\"gbps\": [");
    for (std::size_t i = 0; i < runs.size(); ++i) std::fprintf(f, "%s%.4f", i ? ", " : "", runs[i]);
    std::fprintf(f, "], \"median_gbps\": %.4f}\n", median);
    std::fclose(f);
  }
  return 0;
}
