// Parses the parameter table from an Environment (the only reader of CHORUS_* variables)
// and lays Options over it; every value of every row is checked here, once.
#include "config/config.h"

#include <cstdlib>
#include <type_traits>

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
#define CHORUS_PARAM(field, NAME, type, scope, def, unit, doc) \
  {#field, #NAME, ParamType::type, Scope::scope, def, unit, doc},
#include "config/params.def"
#undef CHORUS_PARAM
  };
  return table;
}

const char* to_string(ParamType t) {
  switch (t) {
    case ParamType::kInt: return "int";
    case ParamType::kBytes: return "bytes";
    case ParamType::kSeconds: return "int";
    case ParamType::kBool: return "bool";
    case ParamType::kString: return "string";
    case ParamType::kLogSubsys: return "list";
    case ParamType::kTransport:
    case ParamType::kHangReport:
    case ParamType::kRecorderFormat:
    case ParamType::kLogLevel:
    case ParamType::kKernelIsa: return "enum";
  }
  return "?";
}

const char* to_string(Scope s) {
  switch (s) {
    case Scope::kComm: return "communicator";
    case Scope::kProcess: return "process";
    case Scope::kLaunch: return "launcher";
  }
  return "?";
}

namespace {

template <ParamType T>
struct Tag {};

Status bad_value(const std::string& who, std::string_view value, const std::string& expected) {
  return invalid_argument(str_printf("%s='%.*s' is not %s", who.c_str(),
                                     static_cast<int>(value.size()), value.data(),
                                     expected.c_str()));
}

// --- Text -> value (`text` is not empty) ------------------------------------------------

Status parse(Tag<ParamType::kInt>, const std::string& who, std::string_view text,
             std::optional<std::int64_t>* out) {
  auto v = parse_int(std::string(text));
  if (!v) return bad_value(who, text, "an integer");
  *out = *v;
  return Status();
}

Status parse(Tag<ParamType::kBytes>, const std::string& who, std::string_view text,
             std::optional<std::uint64_t>* out) {
  auto v = parse_size(std::string(text));
  if (!v) return bad_value(who, text, "a size (e.g. 4096, 64K, 1M)");
  *out = *v;
  return Status();
}

Status parse(Tag<ParamType::kSeconds>, const std::string& who, std::string_view text,
             std::optional<std::chrono::milliseconds>* out) {
  auto v = parse_int(std::string(text));
  if (!v) return bad_value(who, text, "an integer (seconds)");
  *out = std::chrono::seconds(*v);
  return Status();
}

Status parse(Tag<ParamType::kBool>, const std::string& who, std::string_view text, bool* out) {
  if (text == "0" || text == "false") *out = false;
  else if (text == "1" || text == "true") *out = true;
  else return bad_value(who, text, "a boolean (0 or 1)");
  return Status();
}

Status parse(Tag<ParamType::kString>, const std::string&, std::string_view text,
             std::string* out) {
  *out = std::string(text);
  return Status();
}

Status parse(Tag<ParamType::kLogSubsys>, const std::string& who, std::string_view text,
             unsigned* out) {
  auto v = parse_subsys_list(text);
  if (!v) return bad_value(who, text, "a list of " + spelling_list<LogSubsys>() + ", ALL");
  *out = *v;
  return Status();
}

template <ParamType T, class E = value_t<T>, class = std::enable_if_t<std::is_enum_v<E>>>
Status parse(Tag<T>, const std::string& who, std::string_view text, E* out) {
  auto v = parse_enum<E>(text);
  if (!v) return bad_value(who, text, "one of " + spelling_list<E>());
  *out = *v;
  return Status();
}

// --- Limits: the same for a variable and an Options field -------------------------------

// The least value of a numeric field (none for the others).
std::optional<std::int64_t> least_value(std::string_view field) {
  if (field == "timeout" || field == "connect_timeout") return 1;  // ms
  if (field == "chunk_bytes") return 1;
  if (field == "spin_us" || field == "flight_recorder_size") return 0;
  return std::nullopt;
}

Status check_least(std::string_view field, const std::string& who, long long value,
                   const char* unit) {
  auto least = least_value(field);
  if (!least || value >= *least) return Status();
  return invalid_argument(str_printf("%s must be %s, got %lld%s", who.c_str(),
                                     *least == 0 ? ">= 0" : "> 0", value, unit));
}

Status check(Tag<ParamType::kInt>, std::string_view field, const std::string& who,
             std::int64_t v) {
  return check_least(field, who, v, "");
}
Status check(Tag<ParamType::kBytes>, std::string_view field, const std::string& who,
             std::uint64_t v) {
  return check_least(field, who, static_cast<long long>(v), " bytes");
}
Status check(Tag<ParamType::kSeconds>, std::string_view field, const std::string& who,
             std::chrono::milliseconds v) {
  return check_least(field, who, static_cast<long long>(v.count()), " ms");
}
template <ParamType T, class V>
Status check(Tag<T>, std::string_view, const std::string& who, const V& v) {
  if constexpr (std::is_enum_v<V>) {
    if (name_of(v) == std::string_view("?"))
      return invalid_argument(str_printf("%s holds %d, not one of %s", who.c_str(),
                                         static_cast<int>(v), spelling_list<V>().c_str()));
  }
  return Status();
}

// --- One row ------------------------------------------------------------------------------

template <class H>
bool has(const H& v) {
  if constexpr (requires { v.has_value(); }) return v.has_value();
  else return true;
}
template <class H>
const auto& value(const H& v) {
  if constexpr (requires { v.has_value(); }) return *v;
  else return v;
}

template <ParamType T>
Status load_one(std::string_view field, const char* name, const char* def,
                const Environment& env, held_t<T>* out) {
  const std::string who = std::string("environment variable ") + name;
  if (*def != '\0') CHORUS_RETURN_IF_ERROR(parse(Tag<T>{}, who + " (default)", def, out));
  auto v = env.get(name);
  if (!v) return Status();
  if (v->empty()) {
    // Empty = the default, but an empty string is a string and an empty bool is 0.
    if constexpr (T == ParamType::kString || T == ParamType::kBool) *out = held_t<T>{};
    return Status();
  }
  CHORUS_RETURN_IF_ERROR(parse(Tag<T>{}, who, *v, out));
  return check(Tag<T>{}, field, who, value(*out));
}

}  // namespace

Result<Config> load(const Environment& env) {
  Config c;
#define CHORUS_PARAM(field, NAME, type, scope, def, unit, doc) \
  CHORUS_RETURN_IF_ERROR(load_one<ParamType::type>(#field, #NAME, def, env, &c.field));
#include "config/params.def"
#undef CHORUS_PARAM
  return c;
}

Result<Config> with_options(Config base, const Options& options) {
#define CHORUS_PARAM(field, NAME, type, scope, def, unit, doc) CHORUS_OPTION_##scope(type, field)
#define CHORUS_OPTION_kProcess(type, field)
#define CHORUS_OPTION_kLaunch(type, field)
#define CHORUS_OPTION_kComm(type, field)                                                       \
  static_assert(std::is_same_v<decltype(options.field)::value_type, value_t<ParamType::type>>, \
                "Options::" #field " must be std::optional of the row's value type");         \
  if (options.field) {                                                                         \
    CHORUS_RETURN_IF_ERROR(check(Tag<ParamType::type>{}, #field, "Options::" #field,           \
                                 *options.field));                                             \
    base.field = *options.field;                                                               \
  }
#include "config/params.def"
#undef CHORUS_OPTION_kComm
#undef CHORUS_OPTION_kLaunch
#undef CHORUS_OPTION_kProcess
#undef CHORUS_PARAM
  return base;
}

Status parse_option(Options& options, std::string_view field, std::string_view text) {
#define CHORUS_PARAM(f, NAME, type, scope, def, unit, doc) CHORUS_SET_##scope(type, f)
#define CHORUS_SET_kProcess(type, f)
#define CHORUS_SET_kLaunch(type, f)
#define CHORUS_SET_kComm(type, f)                                                         \
  if (field == #f) {                                                                      \
    const std::string who = "Options::" #f;                                               \
    if (text.empty() && ParamType::type != ParamType::kString)                            \
      return invalid_argument(who + " needs a value");                                    \
    held_t<ParamType::type> v{};                                                          \
    CHORUS_RETURN_IF_ERROR(parse(Tag<ParamType::type>{}, who, text, &v));                 \
    CHORUS_RETURN_IF_ERROR(check(Tag<ParamType::type>{}, #f, who, value(v)));             \
    options.f = value(v);                                                                 \
    return Status();                                                                      \
  }
#include "config/params.def"
#undef CHORUS_SET_kComm
#undef CHORUS_SET_kLaunch
#undef CHORUS_SET_kProcess
#undef CHORUS_PARAM
  return invalid_argument(str_printf("Options has no field '%.*s'",
                                     static_cast<int>(field.size()), field.data()));
}

Result<Config> process_config() {
  static const Result<Config> loaded = load(Environment::process());
  return loaded;
}

}  // namespace chorus::config
