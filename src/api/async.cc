// Communicator's stream, synchronize and group calls; Stream validation.
#include "api/error.h"
#include "api/stream_check.h"
#include "chorus/communicator.h"
#include "core/comm.h"
#include "util/strings.h"

namespace chorus {

namespace api {

int stream_id(const core::Comm& impl, const Stream& stream) {
  const bool mine = stream.owner() == &impl || (stream.owner() == nullptr && stream.id() == 0);
  if (!mine)
    throw Error(ErrorCode::kInvalidArgument,
                str_printf("stream '%s' (id %d) belongs to another communicator; streams are "
                           "per communicator (create_stream())",
                           stream.name().c_str(), stream.id()));
  Status s = impl.check_stream(stream.id());
  if (!s.is_ok()) throw Error(ErrorCode::kInvalidArgument, "stream: " + s.message());
  return stream.id();
}

}  // namespace api

Stream Communicator::create_stream(const std::string& name) {
  core::Comm& c = impl();
  const int id = c.create_stream(name);
  return Stream(&c, id, name);
}

void Communicator::synchronize() { api::throw_if_error(impl().synchronize()); }

void Communicator::group_start() { impl().group_start(); }

void Communicator::group_end() { api::throw_if_error(impl().group_end()); }

}  // namespace chorus
