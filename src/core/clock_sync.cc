// Clock alignment against rank 0 through the store (see clock_sync.h).
#include "core/clock_sync.h"

#include <charconv>
#include <limits>

#include "diag/flight_recorder.h"
#include "diag/log.h"
#include "util/strings.h"

namespace chorus::core {

namespace {

std::string key(int rank, int round, const char* what) {
  return str_printf("clock/%d/%d/%s", rank, round, what);
}

bootstrap::Bytes to_bytes(const std::string& s) { return bootstrap::Bytes(s.begin(), s.end()); }

}  // namespace

diag::ClockAlignment align_clock(bootstrap::Store& store, int rank, int size, int rounds,
                                 Deadline deadline) {
  diag::ClockAlignment out;
  if (size <= 1 || rank == 0) {
    out.method = size <= 1 ? "single rank" : "reference";
    if (rank == 0 && size > 1) {
      for (int r = 1; r < size; ++r)
        for (int k = 0; k < rounds; ++k) {
          if (!store.get(key(r, k, "q"), deadline)) return out;
          const std::string now = std::to_string(diag::steady_now_ns());
          if (!store.set(key(r, k, "a"), to_bytes(now)).is_ok()) return out;
        }
    }
    return out;
  }
  std::int64_t best_rtt = std::numeric_limits<std::int64_t>::max();
  for (int k = 0; k < rounds; ++k) {
    const std::int64_t t0 = diag::steady_now_ns();
    if (!store.set(key(rank, k, "q"), to_bytes("1")).is_ok()) break;
    Result<bootstrap::Bytes> a = store.get(key(rank, k, "a"), deadline);
    const std::int64_t t1 = diag::steady_now_ns();
    if (!a) {
      CHORUS_LOG(WARN, Init, "rank %d: clock alignment with rank 0 failed: %s", rank,
                 a.status().message().c_str());
      break;
    }
    std::int64_t ref = 0;
    const auto* b = reinterpret_cast<const char*>(a->data());
    if (std::from_chars(b, b + a->size(), ref).ec != std::errc()) break;
    ++out.samples;
    if (t1 - t0 < best_rtt) {
      best_rtt = t1 - t0;
      out.offset_ns = ref - (t0 + t1) / 2;
      out.error_ns = (t1 - t0 + 1) / 2;
      out.method = "store round trip";
    }
  }
  return out;
}

}  // namespace chorus::core
