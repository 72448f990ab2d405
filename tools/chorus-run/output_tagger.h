// Copies a rank's output pipe to chorus-run's stdout or stderr, one prefixed line at a time.
#pragma once
#include <string>

namespace chorus_run {

// Reads from `fd` (non-blocking, owned) and writes each complete line to `dest_fd`
// as prefix + line. A line is written with one write() so ranks' lines never mix.
// Lines longer than 64 KiB are split.
class TaggedStream {
 public:
  TaggedStream(int fd, int dest_fd, std::string prefix);
  TaggedStream(TaggedStream&& other) noexcept;
  TaggedStream& operator=(TaggedStream&&) = delete;
  TaggedStream(const TaggedStream&) = delete;
  ~TaggedStream();

  int fd() const { return fd_; }
  bool is_open() const { return fd_ >= 0; }
  // Copies whatever can be read now. At end of file (or a read error) writes the
  // unterminated last line, if any, with a newline and closes the pipe.
  void pump();
  // Writes a pending partial line and closes the pipe without reading further.
  void finish();

 private:
  void emit_lines(bool flush_partial);

  int fd_;
  int dest_fd_;
  std::string prefix_;
  std::string pending_;  // bytes read but not yet written (no newline yet)
};

// Writes all of `data` to `fd`, retrying on EINTR/EAGAIN; gives up on other errors.
void write_all(int fd, const std::string& data);

}  // namespace chorus_run
