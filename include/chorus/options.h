// Per-communicator options. A field left empty (std::nullopt) takes its value from the
// environment (the CHORUS_* variable of the same setting, docs/CONFIG.md), else from the
// table's default; a set field wins over the variable. Each field is checked at init like
// the variable it replaces: a bad value fails Communicator::init with kInvalidArgument
// naming the field ("Options::chunk_bytes").
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "chorus/export.h"

namespace chorus {

// What carries the bytes between ranks (CHORUS_TRANSPORT).
enum class Transport {
  kAuto,  // shared memory when every rank is on one host, shm + TCP across hosts
  kShm,   // shared memory only (every rank on one host)
  kTcp,   // TCP only
};

// Who prints the cross-rank hang report after a failure (CHORUS_HANG_REPORT).
enum class HangReport {
  kRank0,  // rank 0 prints it
  kAll,    // every rank prints it
  kNone,   // none (and no liveness check naming a stalled rank in timeout errors)
};

// Form of the automatic flight-recorder dumps (CHORUS_FLIGHT_RECORDER_FORMAT).
enum class RecorderFormat { kText, kJson };

struct Options {
  // Deadline for every operation (collective, send, recv); > 0. CHORUS_TIMEOUT.
  std::optional<std::chrono::milliseconds> timeout;
  // Deadline for rendezvous and connection set-up; > 0. CHORUS_CONNECT_TIMEOUT.
  std::optional<std::chrono::milliseconds> connect_timeout;
  // Stamp every message with its operation's signature (desync check). CHORUS_DESYNC_CHECK.
  std::optional<bool> desync_check;
  // Algorithm override, same syntax as CHORUS_ALGO ("" = automatic).
  std::optional<std::string> algo;
  // Collectives the cost model chooses for, as CHORUS_COST_MODEL.
  std::optional<std::string> cost_model;
  // Cost-model cache file ("none" = never write), as CHORUS_TUNING_FILE.
  std::optional<std::string> tuning_file;
  // Tuning table file (chorus-tune --write), as CHORUS_TUNING_TABLE.
  std::optional<std::string> tuning_table;
  // How the selector follows the processors' placement, as CHORUS_PLACEMENT: "auto",
  // "off" or a fixed factor "1".."16".
  std::optional<std::string> placement;
  // Pipelining chunk size of ring and tree algorithms, bytes; > 0. CHORUS_CHUNK_SIZE.
  std::optional<std::size_t> chunk_bytes;
  // all_reduce at or below this size uses latency-optimised algorithms. CHORUS_SMALL_MSG_SIZE.
  std::optional<std::size_t> small_bytes;
  // TCP messages up to this size go before the receiver is ready. CHORUS_EAGER_LIMIT.
  std::optional<std::size_t> eager_bytes;
  // SO_SNDBUF/SO_RCVBUF of data sockets (0 = kernel default). CHORUS_SOCKET_BUFSIZE.
  std::optional<std::size_t> socket_buffer_bytes;
  // TCP busy-wait before blocking, microseconds; >= 0. CHORUS_SPIN_US.
  std::optional<std::int64_t> spin_us;
  // Address peers use to reach this rank. CHORUS_SOCKET_ADDR.
  std::optional<std::string> socket_addr;
  // Interface whose IPv4 address TCP binds and advertises. CHORUS_SOCKET_IFNAME.
  std::optional<std::string> socket_ifname;
  // Transport between ranks. CHORUS_TRANSPORT.
  std::optional<Transport> transport;
  // Bytes per shared-memory ring. CHORUS_BUFFSIZE.
  std::optional<std::size_t> buff_bytes;
  // Host identity: ranks with the same value share memory. CHORUS_HOST_ID.
  std::optional<std::string> host_id;
  // Large shm collectives read peers' buffers directly when possible. CHORUS_SINGLE_COPY.
  std::optional<bool> single_copy;
  // Operations kept by the flight recorder (0 = off); >= 0. CHORUS_FLIGHT_RECORDER_SIZE.
  std::optional<std::int64_t> flight_recorder_size;
  // Form of the automatic flight-recorder dumps. CHORUS_FLIGHT_RECORDER_FORMAT.
  std::optional<RecorderFormat> flight_recorder_format;
  // Cross-rank hang report on failure. CHORUS_HANG_REPORT.
  std::optional<HangReport> hang_report;
  // Timeline file pattern (the process's first pattern names its one file; "" = off).
  // CHORUS_TIMELINE.
  std::optional<std::string> timeline;
  // Collect per-operation statistics (Communicator::stats()). CHORUS_STATS=1 also has
  // rank 0 print every rank's table when the communicator is destroyed; this field
  // only collects (false turns statistics off for this communicator).
  std::optional<bool> stats;
};

// Sets the field `field` of `options` (e.g. "chunk_bytes") from `text` written as the
// CHORUS_* variable would be ("1M", "tcp", "1"; timeouts in seconds). Throws
// chorus::Error kInvalidArgument naming the field for an unknown field or a bad value.
// Used by the Python bindings; thread-compatible.
CHORUS_EXPORT void set_option(Options& options, std::string_view field, std::string_view text);

}  // namespace chorus
