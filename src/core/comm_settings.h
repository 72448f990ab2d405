// CommConfig: a communicator's resolved settings (core/comm_config.h makes them from
// Options and the CHORUS_* table); every part of a communicator reads them.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace chorus::core {

// Resolved per-communicator settings (options merged over CHORUS_* config).
struct CommConfig {
  std::chrono::milliseconds timeout{300000};
  std::chrono::milliseconds connect_timeout{60000};
  std::string algo;              // CHORUS_ALGO syntax
  std::size_t chunk_bytes = 1 << 20;
  std::size_t small_bytes = 64 << 10;
  std::size_t eager_bytes = 64 << 10;
  std::size_t socket_buffer_bytes = 4 << 20;
  std::string socket_addr;       // "" = derive from the store connection
  std::string socket_ifname;     // interface to bind when socket_addr is empty
  std::int64_t spin_us = 50;     // TCP busy-wait budget
  std::size_t buff_bytes = 1 << 20;  // bytes per shared-memory ring
  bool single_copy = true;       // shm: process_vm_readv algorithms when every rank can
  std::string host_id;           // overrides the host identity ("" = hostname + boot id)
  std::string transport = "tcp";
  bool desync_check = true;      // stamp operation signatures into message tags
  bool stats = false;            // Options::stats: collect per-operation statistics
  std::string cost_model = "auto";  // CHORUS_COST_MODEL
  std::string tuning_file;       // CHORUS_TUNING_FILE, resolved ("none" = no file)
  std::string tuning_table;      // CHORUS_TUNING_TABLE
};

}  // namespace chorus::core
