// The registry of live communicators: a mutex-protected set that outlives static destruction.
#include "core/live_comms.h"

#include <mutex>
#include <set>

namespace chorus::core {

namespace {

// Never destroyed, so communicators that outlive static destruction can still unregister.
struct Registry {
  std::mutex mu;
  std::set<CommImpl*> live;
};
Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

}  // namespace

void live_comms_add(CommImpl* comm) {
  std::lock_guard<std::mutex> g(registry().mu);
  registry().live.insert(comm);
}

void live_comms_remove(CommImpl* comm) {
  std::lock_guard<std::mutex> g(registry().mu);
  registry().live.erase(comm);
}

void live_comms_for_each(const std::function<void(CommImpl&)>& fn) {
  std::lock_guard<std::mutex> g(registry().mu);
  for (CommImpl* c : registry().live) fn(*c);
}

}  // namespace chorus::core
