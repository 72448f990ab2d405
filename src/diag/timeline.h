// Timeline: the process's CHORUS_TIMELINE file, a Chrome trace-event / Perfetto JSON
// object with one span ("ph":"X") per operation, a child span ("cat":"chorus.level") per
// level of a hierarchical algorithm inside it, one track per (communicator, stream),
// and the clock alignment in "otherData". Written in pieces as it fills (1 MiB) and
// closed when the last communicator using it goes away (or at process exit).
#pragma once
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <map>
#include <string>

#include "chorus/profiler.h"

namespace chorus::diag {

// This rank's clock against the reference rank's (steady clocks): reference time =
// local time + offset_ns, to within +- error_ns.
struct ClockAlignment {
  int reference_rank = 0;
  std::int64_t offset_ns = 0;
  std::int64_t error_ns = 0;
  int samples = 0;
  const char* method = "none";
};

// The trace format's version (docs/DIAGNOSTICS.md, "Timeline").
inline constexpr int kTimelineVersion = 1;

class Timeline {
 public:
  // The process's timeline. Thread-safe.
  static Timeline& process();
  ~Timeline();

  // Opens `pattern` (%r = `rank`, %h host, %p pid) unless a file is open already, and
  // counts one more user. Returns false (after a warning) when it cannot be opened.
  bool acquire(const std::string& pattern, int rank, int size, const ClockAlignment& clock);
  // One user fewer; the last one writes the end and closes the file.
  void release();
  bool is_open() const;

  // Declares communicator `comm_id` (named `key`, identical on its member ranks), with
  // this process's rank in it and its size.
  void add_comm(std::uint32_t comm_id, const std::string& key, int rank, int size);
  // One finished operation, with its levels (OpEvent::levels) as child spans.
  void span(const OpEvent& e);

 private:
  void levels_locked(const OpEvent& e, long tid);
  void flush_locked();
  void close_locked();
  // The track (trace "tid") of e's communicator and stream, declared on first use; its
  // stream name, escaped once, in *stream.
  long track_locked(const OpEvent& e, const std::string** stream);

  mutable std::mutex mu_;
  std::FILE* file_ = nullptr;
  int users_ = 0;
  int pid_ = 0;  // the process's (first communicator's) rank: the trace's "pid"
  std::int64_t offset_ns_ = 0;
  std::string buf_;
  bool first_event_ = true;
  std::map<long, std::string> tracks_;  // tid -> escaped stream name
};

// The CHORUS_DEBUG_FILE-style expansion of `pattern` (%h host, %p pid, %r rank).
std::string expand_file_pattern(const std::string& pattern, int rank);

}  // namespace chorus::diag
