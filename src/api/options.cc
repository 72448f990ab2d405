// chorus::set_option: an Options field from its CHORUS_* text form (config's parsers).
#include "chorus/options.h"

#include "api/error.h"
#include "config/config.h"

namespace chorus {

void set_option(Options& options, std::string_view field, std::string_view text) {
  api::throw_if_error(config::parse_option(options, field, text));
}

}  // namespace chorus
