// Parses the parameter table from an Environment. The only reader of CHORUS_* variables.
#include "config/config.h"

#include <cstdlib>

#include "util/strings.h"

namespace chorus::config {

const Environment& Environment::process() {
  struct ProcessEnvironment : Environment {
    std::optional<std::string> get(const std::string& name) const override {
      const char* v = std::getenv(name.c_str());
      if (v == nullptr) return std::nullopt;
      return std::string(v);
    }
  };
  static const ProcessEnvironment env;
  return env;
}

const std::vector<ParamDesc>& params() {
  static const std::vector<ParamDesc> table = {
#define CHORUS_PARAM(field, NAME, type, def, unit, doc) {#NAME, ParamType::type, def, unit, doc},
#include "config/params.def"
#undef CHORUS_PARAM
  };
  return table;
}

const char* to_string(ParamType t) {
  switch (t) {
    case ParamType::kInt: return "int";
    case ParamType::kBytes: return "bytes";
    case ParamType::kString: return "string";
    case ParamType::kBool: return "bool";
  }
  return "?";
}

namespace {

Status bad_value(const char* name, const std::string& value, const char* expected) {
  return invalid_argument(str_printf("environment variable %s='%s' is not %s", name,
                                     value.c_str(), expected));
}

Status parse(const char* name, const std::string& text, std::optional<std::int64_t>* out) {
  if (text.empty()) return Status();
  auto v = parse_int(text);
  if (!v) return bad_value(name, text, "an integer");
  *out = *v;
  return Status();
}

Status parse(const char* name, const std::string& text, std::optional<std::uint64_t>* out) {
  if (text.empty()) return Status();
  auto v = parse_size(text);
  if (!v) return bad_value(name, text, "a size (e.g. 4096, 64K, 1M)");
  *out = *v;
  return Status();
}

Status parse(const char*, const std::string& text, std::string* out) {
  *out = text;
  return Status();
}

[[maybe_unused]] Status parse(const char* name, const std::string& text, bool* out) {
  if (text.empty() || text == "0" || text == "false") *out = false;
  else if (text == "1" || text == "true") *out = true;
  else return bad_value(name, text, "a boolean (0 or 1)");
  return Status();
}

}  // namespace

Result<Config> load(const Environment& env) {
  Config c;
#define CHORUS_PARAM(field, NAME, type, def, unit, doc)                       \
  {                                                                           \
    auto v = env.get(#NAME);                                                  \
    CHORUS_RETURN_IF_ERROR(parse(#NAME, def, &c.field));                      \
    if (v) CHORUS_RETURN_IF_ERROR(parse(#NAME, *v, &c.field));                \
  }
#include "config/params.def"
#undef CHORUS_PARAM
  if (c.timeout_s && *c.timeout_s <= 0)
    return invalid_argument("environment variable CHORUS_TIMEOUT must be > 0 seconds");
  if (c.connect_timeout_s && *c.connect_timeout_s <= 0)
    return invalid_argument("environment variable CHORUS_CONNECT_TIMEOUT must be > 0 seconds");
  if (c.chunk_bytes && *c.chunk_bytes == 0)
    return invalid_argument("environment variable CHORUS_CHUNK_SIZE must be > 0");
  if (c.kernel_isa != "auto" && c.kernel_isa != "avx512" && c.kernel_isa != "avx2" &&
      c.kernel_isa != "sse" && c.kernel_isa != "scalar")
    return bad_value("CHORUS_KERNEL_ISA", c.kernel_isa, "one of auto, avx512, avx2, sse, scalar");
  return c;
}

Result<Config> process_config() {
  static const Result<Config> loaded = load(Environment::process());
  return loaded;
}

}  // namespace chorus::config
