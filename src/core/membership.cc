// Membership::derive(): a new communicator from this one's store, under nested keys;
// CommImpl's membership calls, handed to its Membership.
#include "core/membership.h"

#include "core/comm_impl.h"
#include "util/strings.h"

namespace chorus::core {

Result<std::unique_ptr<Comm>> Membership::derive(int new_rank, int new_size,
                                                 const std::string& sub_prefix) const {
  return create_comm(new_rank, new_size, store_, cfg_, keepalive_,
                     key_prefix_ + str_printf("chorus/comm%u/%s/", comm_.comm_id(),
                                              sub_prefix.c_str()));
}

Result<std::unique_ptr<Comm>> CommImpl::shrink() { return members_->shrink(); }
Result<std::unique_ptr<Comm>> CommImpl::split(int color, int key) {
  return members_->split(color, key);
}
Result<std::unique_ptr<Comm>> CommImpl::new_group(const std::vector<int>& ranks) {
  return members_->new_group(ranks);
}

}  // namespace chorus::core
