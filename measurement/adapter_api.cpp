// SPDX-License-Identifier: BSD-3-Clause
#include "measurement/adapter_api.hpp"

#include "adapters/adapter.hpp"

#include <vector>

#include "measurement/events.hpp"
#include "measurement/log.hpp"
#include "measurement/runtime.hpp"
#include "measurement/sampling/sampler.hpp"

namespace prof::api {

Location* acquire() {
  if (g_phase.load(std::memory_order_relaxed) != static_cast<int>(Phase::Within)) return nullptr;
  Location* l = current_location();
  if (!l || l->busy || !l->active) return nullptr;
  l->busy = true;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  return l;
}

void release(Location* loc) {
  if (!loc) return;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  loc->busy = false;
  after_hook(loc);
}

bool recording(const Location* loc) { return loc && g_recording && (loc->tracing || loc->profiling); }
Timestamp now() { return timer::now(); }
std::uint64_t ticks_per_second() { return timer::resolution(); }
void enter(Location* loc, RegionId region) { prof::enter(loc, region, 0); }
void leave(Location* loc, RegionId region) { prof::leave(loc, region, 0); }
void enter_correlated(Location* loc, RegionId region, std::uint32_t correlation) {
  const Timestamp t = timer::now();
  if (loc->tracing) prof::event(loc, t, RecordType::CorrelationId, correlation, 0, nullptr, 0);
  prof::enter_at(loc, region, 0, At{t});
}

void set_interpreter(const void* address) { sampling::set_interpreter(address); }

bool enter_now(RegionId region) {
  Location* l = acquire();
  if (!l) return false;
  prof::enter(l, region, 0);
  release(l);
  return true;
}

void leave_now(RegionId region) {
  if (Location* l = acquire()) {
    prof::leave(l, region, 0);
    release(l);
  }
}

bool event(Location* loc, Timestamp t, RecordType type, std::uint32_t ref, std::uint16_t aux, const Payload* p, unsigned n) {
  const bool written = prof::event(loc, t, type, ref, aux, p, n);
  // The blocking collective this location is in (Location::open_coll), for its End when the run
  // ends before the collective does.
  if (type == RecordType::MpiCollectiveBegin && written) {
    loc->open_coll = loc->depth;
    loc->open_coll_comm = ref;
    loc->open_coll_op = aux;
  } else if (type == RecordType::MpiCollectiveEnd) {
    loc->open_coll = 0;
  }
  return written;
}

void add_bytes(Location* loc, std::uint64_t sent, std::uint64_t received) {
  if (!loc->profiling || !loc->current_node || (sent == 0 && received == 0)) return;
  if (!loc->bytes) loc->bytes = new std::unordered_map<const ProfileNode*, std::pair<std::uint64_t, std::uint64_t>>;
  auto& b = (*loc->bytes)[loc->current_node];
  b.first += sent;
  b.second += received;
}

Location* create_location(const char* name, bool gpu_stream, const char* group) {
  return runtime::create_detached_location(name, gpu_stream ? LocationType::GpuStream : LocationType::CpuThread, group);
}
std::uint32_t location_index(const Location* loc) { return loc->index; }

const void* call_path(const Location* loc) { return loc && loc->profiling ? loc->current_node : nullptr; }


void gpu_activity(Location* stream, const void* path, RegionId region, Timestamp start, Timestamp end, std::uint64_t bytes) {
  if (!stream || !stream->profiling || !g_recording) return;
  // The host path's regions, root excluded, innermost first (the whole path, however deep).
  thread_local std::vector<RegionId> regions_on_path;
  regions_on_path.clear();
  for (auto* n = static_cast<const ProfileNode*>(path); n && n->parent; n = n->parent) regions_on_path.push_back(n->region);
  const std::size_t depth = regions_on_path.size();
  ProfileNode* node = &stream->root_node;
  const std::uint64_t d = end > start ? end - start : 0;
  for (std::size_t i = depth; i-- > 0;) {
    ProfileNode* c = detail::attach_child(stream, node, regions_on_path[i]);
    if (!c) {
      ++stream->profile_folded;
      return;
    }
    node = c;
  }
  ProfileNode* leaf = detail::attach_child(stream, node, region);
  if (!leaf) {
    ++stream->profile_folded;
    return;
  }
  ++leaf->visits;
  leaf->incl_ticks += d;
  if (d < leaf->min_ticks) leaf->min_ticks = d;
  if (d > leaf->max_ticks) leaf->max_ticks = d;
  // The path's nodes on this column: no visits, the time of what ran below them.
  for (ProfileNode* up = leaf->parent; up && up != &stream->root_node; up = up->parent) up->incl_ticks += d;
  if (bytes) {
    if (!stream->gpu_bytes) stream->gpu_bytes = new std::unordered_map<const ProfileNode*, std::uint64_t>;
    (*stream->gpu_bytes)[leaf] += bytes;
  }
}
void ignore_threads_of(const char* prefix) { runtime::ignore_threads_of(prefix); }

RegionId define_region(const regions::RegionDef& def) { return regions::define(def); }
RegionId define_region_unless_filtered(const regions::RegionDef& def) { return regions::define_unless_filtered(def); }
bool add_adapter(const prof_adapter* adapter) { return adapters::add(adapter); }
comms::CommId define_comm(const comms::CommDef& def) { return comms::define(def); }
const config::Values& values() { return config::g_values; }
std::string effective_config() { return config::cfg_file_text(); }
void defer_ready() { runtime::defer_ready(); }
void set_mpp(Mpp* mpp) { runtime::set_mpp(mpp); }
bool ready(std::uint32_t rank) { return runtime::ready(rank); }
void add_clock_offset(Timestamp local, std::int64_t offset) { runtime::add_clock_offset(local, offset); }
bool stop_requested() { return runtime::stop_requested(); }
void finalize(int exit_status) { runtime::finalize(exit_status); }
void error(const char* text) { log::error("%s", text); }
void warning(const char* text) { log::warning("%s", text); }
void info(int level, const char* text) { log::info(level, "%s", text); }
void set_log_rank(std::uint32_t rank) { log::set_rank(rank); }

}  // namespace prof::api
