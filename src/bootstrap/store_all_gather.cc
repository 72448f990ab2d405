// store_all_gather: every rank publishes one value under "<name>/<rank>" and reads all of
// them back in rank order.
#include "bootstrap/store.h"
#include "util/strings.h"

namespace chorus::bootstrap {

Result<std::vector<Bytes>> store_all_gather(Store& store, const std::string& name, int rank,
                                            int size, const Bytes& mine, Deadline deadline) {
  if (size < 1) return invalid_argument(str_printf("store_all_gather: size must be >= 1, got %d", size));
  if (rank < 0 || rank >= size)
    return invalid_argument(str_printf("store_all_gather: rank must be in [0, %d), got %d", size, rank));
  CHORUS_RETURN_IF_ERROR(store.set(str_printf("%s/%d", name.c_str(), rank), mine));
  std::vector<Bytes> all(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) {
    if (r == rank) {
      all[static_cast<std::size_t>(r)] = mine;
      continue;
    }
    auto v = store.get(str_printf("%s/%d", name.c_str(), r), deadline);
    if (!v)
      return v.status()
          .with_context(str_printf("all-gather '%s' on rank %d: value of rank %d", name.c_str(), rank, r))
          .with_peer(r);
    all[static_cast<std::size_t>(r)] = std::move(v).value();
  }
  return all;
}

}  // namespace chorus::bootstrap
