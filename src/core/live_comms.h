// The registry of live communicators of this process (for abort_all() and the SIGUSR1
// flight-recorder dump). A function-local static that is never destroyed.
#pragma once
#include <functional>

namespace chorus::core {

class CommImpl;

void live_comms_add(CommImpl* comm);
// Waits for a running live_comms_for_each() to finish, so `comm` is never visited after.
void live_comms_remove(CommImpl* comm);
// Calls fn on every live communicator with the registry locked (fn must not create or
// destroy communicators).
void live_comms_for_each(const std::function<void(CommImpl&)>& fn);

}  // namespace chorus::core
