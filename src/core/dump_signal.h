// SIGUSR1 -> flight-recorder dump of every live communicator, on stderr.
#pragma once

namespace chorus::core {

// Installs the SIGUSR1 handler and its watcher thread, once per process. The handler
// only writes a byte to a self-pipe (async-signal-safe); the watcher thread dumps every
// live communicator's flight recorder to stderr. Leaves an existing SIGUSR1 handler in
// place (logged). Call from an ordinary thread; safe to call repeatedly.
void install_dump_signal();

}  // namespace chorus::core
