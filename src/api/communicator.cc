// chorus::Communicator: construction, recovery, timeouts and diagnostics (the collectives
// are in api/collectives.cc, streams and groups in api/async.cc).
#include "chorus/communicator.h"

#include "api/error.h"
#include "api/store_adapter.h"
#include "core/comm.h"
#include "core/comm_config.h"
#include "core/init_env.h"
#include "util/strings.h"

namespace chorus {

Communicator::Communicator(std::unique_ptr<core::Comm> impl) : impl_(std::move(impl)) {}
Communicator::Communicator(Communicator&&) noexcept = default;
Communicator& Communicator::operator=(Communicator&&) noexcept = default;
Communicator::~Communicator() = default;

Communicator Communicator::init_from_env(const Options& options) {
  return Communicator(api::value_or_throw(core::init_from_env(options, config::Environment::process())));
}

Communicator Communicator::init(int rank, int size, std::shared_ptr<Store> store,
                                const Options& options) {
  if (!store) throw Error(ErrorCode::kInvalidArgument, "store must not be null");
  auto cfg = api::value_or_throw(core::resolve_process_config(options));
  return Communicator(
      api::value_or_throw(core::create_comm(rank, size, api::to_internal(std::move(store)), cfg)));
}

core::Comm& Communicator::impl() const {
  if (!impl_) throw Error(ErrorCode::kInvalidArgument, "communicator was moved from");
  return *impl_;
}

int Communicator::rank() const { return impl().rank(); }
int Communicator::size() const { return impl().size(); }
std::string Communicator::transport_name() const { return impl().transport_name(); }

void Communicator::check_span_sizes(std::size_t expected, std::size_t actual, std::size_t factor,
                                    const char* name) {
  if (actual != expected * factor)
    throw Error(ErrorCode::kInvalidArgument,
                str_printf("%s has %zu elements, expected %zu", name, actual, expected * factor));
}

bool Communicator::agree(bool flag) { return api::value_or_throw(impl().agree(flag)); }

void Communicator::abort() noexcept {
  if (impl_) impl_->abort();
}

void Communicator::abort_all() noexcept { core::Comm::abort_all(); }

static_assert(Communicator::kNoColor == core::Comm::kNoColor);

std::optional<Communicator> Communicator::split(int color, int key) {
  auto sub = api::value_or_throw(impl().split(color, key));
  if (!sub) return std::nullopt;
  return Communicator(std::move(sub));
}

std::optional<Communicator> Communicator::new_group(std::span<const int> ranks) {
  auto sub = api::value_or_throw(impl().new_group(std::vector<int>(ranks.begin(), ranks.end())));
  if (!sub) return std::nullopt;
  return Communicator(std::move(sub));
}

Communicator Communicator::shrink() { return Communicator(api::value_or_throw(impl().shrink())); }

HealthReport Communicator::health_check(std::chrono::milliseconds timeout) {
  if (timeout.count() < 0)
    throw Error(ErrorCode::kInvalidArgument,
                str_printf("timeout must be >= 0 ms, got %lld", static_cast<long long>(timeout.count())));
  if (impl().in_group())
    throw Error(ErrorCode::kInvalidArgument,
                "health_check() is not allowed between group_start() and group_end()");
  const auto h = impl().health_check(timeout);
  HealthReport r;
  r.ok = h.status.is_ok();
  r.code = h.status.code();
  r.message = h.status.message();
  r.ranks_responding = h.ranks_responding;
  r.elapsed = h.elapsed;
  return r;
}

void Communicator::set_timeout(std::chrono::milliseconds timeout) {
  if (timeout.count() < 0)
    throw Error(ErrorCode::kInvalidArgument,
                str_printf("timeout must be >= 0 ms, got %lld", static_cast<long long>(timeout.count())));
  impl().set_timeout(timeout);
}

std::chrono::milliseconds Communicator::timeout() const { return impl().timeout(); }

std::string Communicator::flight_record() const { return impl().flight_record("api"); }

std::string Communicator::flight_record_json() const {
  return impl().flight_record_json("api");
}

std::vector<OpStatsRow> Communicator::stats() const { return impl().stats(); }

std::string Communicator::stats_text() const { return impl().stats_text(); }

void Communicator::set_profiler(std::shared_ptr<Profiler> profiler) {
  impl().set_profiler(std::move(profiler));
}

Profiler::~Profiler() = default;

}  // namespace chorus
