// SPDX-License-Identifier: BSD-3-Clause
#include "measurement/definitions/contexts.hpp"

#include <mutex>
#include <unordered_map>

namespace prof::contexts {

namespace {
struct Table {
  std::mutex mutex;
  std::vector<ContextDef> defs;
  std::unordered_map<std::uint64_t, ContextId> index;  // (parent, region) → id
  std::vector<GeneratorDef> generators;
};
Table& table() {
  static auto* t = new Table;  // never destroyed: used until the very end
  return *t;
}
}  // namespace

ContextId define(ContextId parent, RegionId region) {
  Table& t = table();
  const std::uint64_t key = static_cast<std::uint64_t>(parent) << 32 | region;
  std::lock_guard<std::mutex> g(t.mutex);
  auto [it, fresh] = t.index.emplace(key, static_cast<ContextId>(t.defs.size()));
  if (fresh) t.defs.push_back({region, parent});
  return it->second;
}

std::vector<ContextDef> snapshot() {
  Table& t = table();
  std::lock_guard<std::mutex> g(t.mutex);
  return t.defs;
}

std::size_t count() {
  Table& t = table();
  std::lock_guard<std::mutex> g(t.mutex);
  return t.defs.size() + t.generators.size();
}

std::uint32_t define_generator(const GeneratorDef& def) {
  Table& t = table();
  std::lock_guard<std::mutex> g(t.mutex);
  t.generators.push_back(def);
  return static_cast<std::uint32_t>(t.generators.size() - 1);
}

std::vector<GeneratorDef> generators() {
  Table& t = table();
  std::lock_guard<std::mutex> g(t.mutex);
  return t.generators;
}

}  // namespace prof::contexts
