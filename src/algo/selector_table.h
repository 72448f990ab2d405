// The algorithm table: every (collective, algorithm) pair that exists, with what each
// needs of the transport, and look-ups by name. Shared by the selector's rules and its
// override parsing.
#pragma once
#include <span>
#include <string>
#include <string_view>

#include "algo/selector.h"

namespace chorus::algo {

struct TableEntry {
  CollKind kind;
  const char* name;
  CollFn fn;
  bool uses_windows = false;
  bool uses_host_windows = false;  // its phases within a host use the host's windows
};

// Every entry, in table order: the first entry of a kind is its default.
std::span<const TableEntry> entries();

// The Choice of entry `e` on a transport with `caps`.
Choice choice(const TableEntry& e, const Capabilities& caps);
// The entry of `kind` named `name`, or null.
const TableEntry* find(CollKind kind, std::string_view name);
// Every algorithm name, once each ("ring, rhd, ..."), and those of one kind ("none").
std::string known_names();
std::string names_for(CollKind kind);

}  // namespace chorus::algo
