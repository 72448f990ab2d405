// Loopback TCP streams, the comparison harness's ceilings for the TCP rows. By default one
// stream: a sender process writes a large buffer over 127.0.0.1 to a receiver process
// (forked, so that the two sides run like two ranks), and the receiver reports the stream's
// GB/s. With --ring N, N processes in a ring each send --bytes to the next and receive
// --bytes from the previous, all at once: what a ring collective over TCP moves with no
// arithmetic and no protocol of its own; the GB/s is per process (--bytes over the slowest
// one's time), which is what a collective's busbw counts.
//
//   tcp_stream [--bytes 1G] [--buffer 64M] [--sockbuf 4M] [--repeats 3] [--ring N]
//              [--json PATH]
//
// --bytes: bytes streamed per repeat (per process in a ring); --buffer: bytes per
// send()/recv() call (the user buffer, reused); --sockbuf: SO_SNDBUF/SO_RCVBUF (0 = kernel
// autotuning). Prints one line per repeat and the median; --json writes {"gbps": [...],
// "median_gbps": x}. Every receiver counts every byte and, after the clock stops, compares
// its buffer with the pattern sent.
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
#include <thread>
#include <vector>

namespace {

struct Args {
  std::size_t bytes = std::size_t{1} << 30;
  std::size_t buffer = std::size_t{64} << 20;
  int sockbuf = 4 << 20;
  int repeats = 3;
  int ring = 0;  // 0: one stream; N >= 2: N processes in a ring
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

using Clock = std::chrono::steady_clock;

// Receives --bytes; returns when the first byte came. Exits 1 on wrong data.
Clock::time_point recv_all(int fd, const Args& a) {
  std::vector<std::uint8_t> buf(a.buffer), want(a.buffer);
  fill(want, 0);
  std::fill(buf.begin(), buf.end(), 0);
  std::size_t got = 0;
  Clock::time_point start;
  while (got < a.bytes) {
    std::size_t off = got % a.buffer;
    std::size_t room = std::min(a.buffer - off, a.bytes - got);
    ssize_t n = ::recv(fd, buf.data() + off, room, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) die("recv");
    if (got == 0) start = Clock::now();
    got += static_cast<std::size_t>(n);
  }
  // Checked after the clock stops: the last fill of the buffer, every byte (earlier fills
  // were overwritten; their count is exact, and the stream is ordered).
  std::size_t len = std::min(a.buffer, a.bytes);
  if (std::memcmp(buf.data(), want.data(), len) != 0) {
    std::fprintf(stderr, "tcp_stream: wrong bytes received\n");
    std::exit(1);
  }
  return start;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

int loopback_listener(int sockbuf, sockaddr_in* addr) {
  int lfd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (lfd < 0) die("socket");
  tune(lfd, sockbuf);  // accepted sockets inherit the buffer sizes
  *addr = sockaddr_in{};
  addr->sin_family = AF_INET;
  addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(lfd, reinterpret_cast<sockaddr*>(addr), sizeof(*addr)) != 0) die("bind");
  if (::listen(lfd, 1) != 0) die("listen");
  socklen_t len = sizeof(*addr);
  if (::getsockname(lfd, reinterpret_cast<sockaddr*>(addr), &len) != 0) die("getsockname");
  return lfd;
}

int connect_to(const sockaddr_in& addr, int sockbuf) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) die("socket");
  tune(fd, sockbuf);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) die("connect");
  return fd;
}

void wait_children(const std::vector<pid_t>& children) {
  bool ok = true;
  for (pid_t child : children) {
    int status = 0;
    ::waitpid(child, &status, 0);
    ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  if (!ok) {
    std::fprintf(stderr, "tcp_stream: a process of the run failed\n");
    std::exit(2);
  }
}

// One stream: the receiver's seconds from the first byte to the last.
double stream_run(const Args& a) {
  sockaddr_in addr{};
  int lfd = loopback_listener(a.sockbuf, &addr);
  pid_t child = ::fork();
  if (child < 0) die("fork");
  if (child == 0) {
    ::close(lfd);
    int fd = connect_to(addr, a.sockbuf);
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
  double s = seconds_since(recv_all(fd, a));
  ::close(fd);
  wait_children({child});
  return s;
}

void write_all(int fd, const void* data, std::size_t len) {
  if (::write(fd, data, len) != static_cast<ssize_t>(len)) die("write to a pipe");
}

void read_all(int fd, void* data, std::size_t len) {
  if (::read(fd, data, len) != static_cast<ssize_t>(len)) die("read from a pipe");
}

// A ring of a.ring processes: each connects to the next one's listener and accepts the
// previous one, says it is ready, waits for the parent's go, then sends and receives at
// once. Returns the slowest process's seconds from the go to its last byte in and out.
double ring_run(const Args& a) {
  int n = a.ring;
  std::vector<int> listeners(n);
  std::vector<sockaddr_in> addrs(n);
  for (int i = 0; i < n; ++i) listeners[i] = loopback_listener(a.sockbuf, &addrs[i]);
  int ready[2], go[2], report[2];
  if (::pipe(ready) != 0 || ::pipe(go) != 0 || ::pipe(report) != 0) die("pipe");
  std::vector<pid_t> children;
  for (int i = 0; i < n; ++i) {
    pid_t child = ::fork();
    if (child < 0) die("fork");
    if (child == 0) {
      int out = connect_to(addrs[(i + 1) % n], a.sockbuf);
      int in = ::accept(listeners[i], nullptr, nullptr);
      if (in < 0) die("accept");
      char c = 0;
      write_all(ready[1], &c, 1);
      read_all(go[0], &c, 1);
      Clock::time_point start = Clock::now();
      std::thread sender([&] { send_all(out, a); });
      recv_all(in, a);
      sender.join();
      double s = seconds_since(start);
      write_all(report[1], &s, sizeof(s));
      ::shutdown(out, SHUT_WR);
      std::_Exit(0);
    }
    children.push_back(child);
  }
  // The parent keeps only its ends, so that a child's death reads as end of file.
  for (int fd : listeners) ::close(fd);
  for (int fd : {ready[1], go[0], report[1]}) ::close(fd);
  char c = 0;
  for (int i = 0; i < n; ++i) read_all(ready[0], &c, 1);
  std::vector<char> all(static_cast<std::size_t>(n), 0);
  write_all(go[1], all.data(), all.size());
  double slowest = 0;
  for (int i = 0; i < n; ++i) {
    double s = 0;
    read_all(report[0], &s, sizeof(s));
    slowest = std::max(slowest, s);
  }
  wait_children(children);
  for (int fd : {ready[0], go[1], report[0]}) ::close(fd);
  return slowest;
}

double one_run(const Args& a) {
  double s = a.ring >= 2 ? ring_run(a) : stream_run(a);
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
    else if (ok && k == "--ring") a.ring = std::atoi(v), ok = a.ring >= 2 && a.ring <= 64;
    else if (ok && k == "--json") a.json = v;
    else ok = false;
    if (!ok) {
      std::fprintf(stderr,
                   "usage: %s [--bytes 1G] [--buffer 64M] [--sockbuf 4M|0] [--repeats 3] "
                   "[--ring 2..64] [--json PATH]\nbad or missing value for %s\n", argv[0], k.c_str());
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
    std::printf("tcp_stream: run %d: %.3f GB/s (%zu bytes, %zu B per call, sockbuf %d%s)\n",
                r + 1, runs.back(), a.bytes, a.buffer, a.sockbuf,
                a.ring >= 2 ? (", ring of " + std::to_string(a.ring)).c_str() : "");
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
