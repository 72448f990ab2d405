// Line-by-line prefixing of rank output ("[rank] text").
#include "output_tagger.h"

#include <errno.h>
#include <poll.h>
#include <unistd.h>

#include <utility>

namespace chorus_run {
namespace {
constexpr std::size_t kMaxLine = 64 * 1024;
}  // namespace

void write_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EAGAIN) {
      pollfd p{fd, POLLOUT, 0};
      poll(&p, 1, 100);
    } else if (!(n < 0 && errno == EINTR)) {
      return;  // EPIPE or a closed terminal: the output has nowhere to go
    }
  }
}

TaggedStream::TaggedStream(int fd, int dest_fd, std::string prefix)
    : fd_(fd), dest_fd_(dest_fd), prefix_(std::move(prefix)) {}

TaggedStream::TaggedStream(TaggedStream&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      dest_fd_(other.dest_fd_),
      prefix_(std::move(other.prefix_)),
      pending_(std::move(other.pending_)) {}

TaggedStream::~TaggedStream() { finish(); }

void TaggedStream::pump() {
  char buf[16384];
  while (fd_ >= 0) {
    ssize_t n = read(fd_, buf, sizeof(buf));
    if (n > 0) {
      pending_.append(buf, static_cast<std::size_t>(n));
      emit_lines(false);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    finish();  // end of file or a read error
  }
}

void TaggedStream::finish() {
  emit_lines(true);
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

void TaggedStream::emit_lines(bool flush_partial) {
  std::string out;
  std::size_t start = 0;
  while (start < pending_.size()) {
    std::size_t nl = pending_.find('\n', start);
    std::size_t end;
    if (nl != std::string::npos && nl - start < kMaxLine) {
      end = nl + 1;
    } else if (pending_.size() - start >= kMaxLine) {
      end = start + kMaxLine;
    } else if (flush_partial) {
      end = pending_.size();
    } else {
      break;
    }
    out += prefix_;
    out.append(pending_, start, end - start);
    if (out.back() != '\n') out += '\n';
    start = end;
  }
  pending_.erase(0, start);
  if (!out.empty()) write_all(dest_fd_, out);
}

}  // namespace chorus_run
