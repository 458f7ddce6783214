// SPDX-License-Identifier: BSD-3-Clause
// Region registry: a vector under one mutex plus two maps (definition key → id, address → id).
// Clones of one function (foo, foo.constprop.0, foo.isra.0) share the base function's region.
#include "measurement/definitions/regions.hpp"

#include <cstdio>
#include <mutex>
#include <unordered_map>

#include "measurement/definitions/symbols.hpp"
#include "measurement/filter/filter.hpp"

namespace prof::regions {

namespace {
struct Registry {
  std::mutex mutex;
  std::vector<RegionDef> defs;
  std::unordered_map<std::string, RegionId> by_key;
  std::unordered_map<const void*, RegionId> by_address;
  std::unordered_map<RegionId, std::uintptr_t> entries;  // region → function entry (sampling)
};
// Never destroyed: hooks may run during exit, after static destructors.
Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

const filter::Filter* g_filter = nullptr;

std::string key_of(const RegionDef& d) {
  std::string k = d.canonical;
  k += '\x1f';
  k += d.file;
  k += '\x1f';
  k += static_cast<char>('0' + static_cast<int>(d.paradigm));
  return k;
}

RegionId define_locked(Registry& r, RegionDef&& def) {
  std::string key = key_of(def);
  auto it = r.by_key.find(key);
  if (it != r.by_key.end()) return it->second;
  RegionId id = static_cast<RegionId>(r.defs.size());
  r.defs.push_back(std::move(def));
  r.by_key.emplace(std::move(key), id);
  return id;
}
}  // namespace

void lock_for_fork() { registry().mutex.lock(); }
void unlock_after_fork() { registry().mutex.unlock(); }

void set_filter(const filter::Filter* f) { g_filter = f; }

RegionId define(RegionDef def) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (def.canonical.empty()) def.canonical = def.name;
  return define_locked(r, std::move(def));
}

RegionId define_unless_filtered(RegionDef def) {
  if (def.canonical.empty()) def.canonical = def.name;
  if (g_filter && g_filter->excluded(def.name, def.canonical, def.file)) return kFiltered;
  return define(std::move(def));
}

bool outlined_by_compiler(std::string_view symbol) {
  // GCC: "main._omp_fn.0", "MAIN__._omp_fn.1", task copy functions "main._omp_cpyfn.2";
  // clang: ".omp_outlined.", ".omp_outlined._debug__", ".omp_task_entry.", other ".omp*" helpers.
  return symbol.find("._omp_fn.") != std::string_view::npos || symbol.find("._omp_cpyfn.") != std::string_view::npos ||
         symbol.rfind(".omp", 0) == 0;
}

RegionId for_address(const void* fn) {
  Registry& r = registry();
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.by_address.find(fn);
    if (it != r.by_address.end()) return it->second;
  }
  // Resolve without the lock: symbol lookup may open DWARF and take a while.
  symbols::SymbolInfo info;
  RegionDef def;
  if (symbols::resolve(fn, &info)) {
    def.name = info.name;
    def.canonical = info.mangled.empty() ? info.name : info.mangled;
    def.file = info.file;
    def.begin_line = info.line;
    def.end_line = info.end_line;
  } else {
    char buf[48];
    std::snprintf(buf, sizeof buf, "UNKNOWN@%p", fn);
    def.name = def.canonical = buf;
  }
  def.paradigm = Paradigm::Compiler;
  def.role = Role::Function;
  bool filtered = outlined_by_compiler(def.canonical) || (g_filter && g_filter->excluded(def.name, def.canonical, def.file));
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.by_address.find(fn);
  if (it != r.by_address.end()) return it->second;
  RegionId id = filtered ? kFiltered : define_locked(r, std::move(def));
  r.by_address.emplace(fn, id);
  if (!filtered) r.entries.emplace(id, info.entry ? info.entry : reinterpret_cast<std::uintptr_t>(fn));
  return id;
}

std::uintptr_t entry_of(RegionId id) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.entries.find(id);
  return it == r.entries.end() ? 0 : it->second;
}

void note_entry(RegionId id, const void* fn) {
  if (id == kFiltered || !fn) return;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.entries.emplace(id, reinterpret_cast<std::uintptr_t>(fn));
}

void forget_addresses() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.by_address.clear();
}

std::vector<RegionDef> snapshot() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.defs;
}

std::size_t count() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.defs.size();
}

}  // namespace prof::regions
