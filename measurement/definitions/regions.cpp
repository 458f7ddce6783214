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
  std::unordered_map<RegionId, std::vector<std::uint32_t*>> descriptors;  // GCC plugin flags words
};
// Never destroyed: hooks may run during exit, after static destructors.
Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

const filter::Filter* g_filter = nullptr;
std::uint64_t g_throttle_visits = 0;  // 0: throttling off
double g_throttle_max_ticks = 0;      // mean inclusive ticks per visit below which
double g_ticks_per_ns = 1;

/// Whether throttling may stop a compiler region: on, and no INCLUDE rule names it.
bool may_throttle(const RegionDef& def) {
  return g_throttle_visits && !(g_filter && g_filter->explicitly_included(def.name, def.canonical, def.file));
}

void mark_may_throttle(RegionId id, bool may) {
  if (may && id < kThrottleSlots) g_throttle_state[id].fetch_or(kMayThrottle, std::memory_order_relaxed);
}

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
const filter::Filter* filter() { return g_filter; }

RegionId define(RegionDef def) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (def.canonical.empty()) def.canonical = def.name;
  return define_locked(r, std::move(def));
}

RegionId define_unless_filtered(RegionDef def) {
  if (def.canonical.empty()) def.canonical = def.name;
  if (g_filter && g_filter->excluded(def.name, def.canonical, def.file)) return kFiltered;
  const bool may = def.paradigm == Paradigm::Compiler && may_throttle(def);
  const RegionId id = define(std::move(def));
  mark_may_throttle(id, may);
  return id;
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
  const bool may = !filtered && may_throttle(def);
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.by_address.find(fn);
  if (it != r.by_address.end()) return it->second;
  RegionId id = filtered ? kFiltered : define_locked(r, std::move(def));
  if (!filtered) mark_may_throttle(id, may);
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
  // Descriptors may have been unloaded with their code: none is written again (the hooks of the
  // others still find their regions throttled, they just keep being called).
  r.descriptors.clear();
}

std::atomic<std::uint8_t> g_throttle_state[kThrottleSlots];

void set_throttle(std::uint64_t visits, std::uint64_t max_ns, double ticks_per_ns) {
  g_throttle_visits = visits;
  g_ticks_per_ns = ticks_per_ns > 0 ? ticks_per_ns : 1;
  g_throttle_max_ticks = static_cast<double>(max_ns) * g_ticks_per_ns;
}

bool consider_throttle(RegionId id, std::uint64_t visits, std::uint64_t incl_ticks) {
  if (!g_throttle_visits || visits < g_throttle_visits || id >= kThrottleSlots) return false;
  if ((g_throttle_state[id].load(std::memory_order_relaxed) & (kMayThrottle | kThrottled)) != kMayThrottle) return false;
  if (static_cast<double>(incl_ticks) >= static_cast<double>(visits) * g_throttle_max_ticks) return false;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (g_throttle_state[id].fetch_or(kThrottled, std::memory_order_relaxed) & kThrottled) return false;
  if (id < r.defs.size()) {
    r.defs[id].throttled_visits = visits;
    r.defs[id].throttled_mean_ns = static_cast<std::uint32_t>(static_cast<double>(incl_ticks) / static_cast<double>(visits) / g_ticks_per_ns + 0.5);
  }
  auto it = r.descriptors.find(id);
  if (it != r.descriptors.end()) {
    for (std::uint32_t* flags : it->second) __atomic_or_fetch(flags, kDescriptorSkip, __ATOMIC_RELAXED);
    r.descriptors.erase(it);
  }
  return true;
}

void note_descriptor(RegionId id, std::uint32_t* flags) {
  if (id >= kThrottleSlots || !(g_throttle_state[id].load(std::memory_order_relaxed) & kMayThrottle)) return;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (g_throttle_state[id].load(std::memory_order_relaxed) & kThrottled) __atomic_or_fetch(flags, kDescriptorSkip, __ATOMIC_RELAXED);
  else r.descriptors[id].push_back(flags);
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
