// Environment: the injectable source of environment variables (tests fake it).
#pragma once
#include <map>
#include <optional>
#include <string>

namespace chorus::config {

class Environment {
 public:
  virtual ~Environment() = default;
  // Value of `name`, or nullopt when unset.
  virtual std::optional<std::string> get(const std::string& name) const = 0;
  // The real process environment (getenv).
  static const Environment& process();
};

// An Environment backed by a map, for tests.
class MapEnvironment : public Environment {
 public:
  MapEnvironment() = default;
  explicit MapEnvironment(std::map<std::string, std::string> vars) : vars_(std::move(vars)) {}
  void set(const std::string& name, const std::string& value) { vars_[name] = value; }
  std::optional<std::string> get(const std::string& name) const override {
    auto it = vars_.find(name);
    if (it == vars_.end()) return std::nullopt;
    return it->second;
  }

 private:
  std::map<std::string, std::string> vars_;
};

}  // namespace chorus::config
