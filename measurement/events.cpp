// SPDX-License-Identifier: BSD-3-Clause
// The out-of-line parts of the event interface: shadow-stack repair, payload records,
// recording on/off.
#include "measurement/events.hpp"

#include <sys/mman.h>
#include <unwind.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include "measurement/log.hpp"
#include "measurement/metrics/metrics.hpp"
#include "measurement/runtime.hpp"

namespace prof {

std::atomic<int> g_phase{static_cast<int>(Phase::Pre)};
bool g_compiler_hooks_on = false;
bool g_recording = true;

namespace detail {

void grow_stack(Location* loc) {
  int saved = errno;
  std::uint32_t cap = loc->capacity ? loc->capacity * 2 : 256;
  auto* f = static_cast<Frame*>(std::realloc(loc->frames, cap * sizeof(Frame)));
  PROF_BUG_ON(!f, "out of memory for the shadow call stack");
  loc->frames = f;
  if (loc->metric_count) {
    auto* m = static_cast<std::uint64_t*>(std::realloc(loc->metric_frames, std::size_t{cap} * loc->metric_count * sizeof(std::uint64_t)));
    PROF_BUG_ON(!m, "out of memory for the metric values of the shadow call stack");
    loc->metric_frames = m;
  }
  loc->capacity = cap;
  errno = saved;
}

// A Leave that is not the innermost frame: its exit hooks were skipped (longjmp, clang's
// unwinding without exit hooks) or it has no Enter (recording started inside it).
void leave_repair(Location* loc, RegionId region, Timestamp t) {
  std::uint32_t d = loc->depth;
  std::uint32_t i = d;
  while (i > 0 && loc->frames[i - 1].region != region) --i;
  if (i == 0) {
    if (loc->unmatched_leaves++ == 0) loc->first_unmatched = region;
    return;
  }
  if (loc->repairs == 0) {
    loc->first_repair_by = region;
    loc->first_repaired = loc->frames[d - 1].region;
  }
  while (loc->depth > i) {
    ++loc->repairs;
    pop(loc, t);
  }
  pop(loc, t);
}

namespace {

/// A well-mixed key for the call path `region` below the path with key (or node address) `parent`.
std::uint64_t path_key(std::uint64_t parent, RegionId region) {
  std::uint64_t k = parent + 0x9E3779B97F4A7C15ull * (static_cast<std::uint64_t>(region) + 1);
  k = (k ^ (k >> 30)) * 0xBF58476D1CE4E5B9ull;
  k = (k ^ (k >> 27)) * 0x94D049BB133111EBull;
  return k ^ (k >> 31);
}

/// The PROFILE MEMORY FULL child of `parent`, made from the location's reserve if needed. When
/// the reserve is used up: the spare node, pointed at `parent` but not linked below it, so the
/// calls inside the visit still stay inside it and its time stays in the parent's exclusive time.
ProfileNode* full_child(Location* loc, ProfileNode* parent, RegionId full_region) {
  if (ProfileNode* c = child_of(parent, full_region)) return c;
  ProfileFull& full = loc->full;
  if (full.used == ProfileFull::kNodes) {
    ++loc->profile_folded;
    full.spare = ProfileNode{full_region, 0, parent, nullptr, nullptr, 0, 0, ~std::uint64_t{0}, 0};
    return &full.spare;
  }
  ProfileNode* n = &full.nodes[full.used++];
  *n = ProfileNode{full_region, 0, parent, nullptr, parent->first_child, 0, 0, ~std::uint64_t{0}, 0};
  parent->first_child = n;
  return n;
}

/// Arena bytes per node: the node, then its metric sums (rounded up to whole cache lines).
std::size_t node_bytes(const Location* loc) {
  return sizeof(ProfileNode) + (std::size_t{loc->metric_count} * sizeof(std::uint64_t) + 63) / 64 * 64;
}

/// A new node from the arena (which has room for it), linked below `parent`.
ProfileNode* arena_node(Location* loc, ProfileNode* parent, RegionId region) {
  NodeArena& a = loc->arena;
  auto* n = reinterpret_cast<ProfileNode*>(a.pos);
  a.pos += node_bytes(loc);
  ++a.nodes;
  *n = ProfileNode{region, loc->metric_count, parent, nullptr, parent->first_child, 0, 0, ~std::uint64_t{0}, 0};
  if (loc->metric_count) std::memset(n + 1, 0, std::size_t{loc->metric_count} * sizeof(std::uint64_t));
  parent->first_child = n;
  return n;
}

}  // namespace

ProfileNode* new_node(Location* loc, RegionId region) {
  ProfileNode* parent = loc->current_node;
  ProfileFull& full = loc->full;
  if (parent->region == runtime::memory_full_region(false) && parent->region != kNoRegion) {
    // Below a PROFILE MEMORY FULL visit: the call stays inside it. Its path key goes into the
    // frame's unused enter time, for the calls below it.
    // A call deeper than PROF_PROFILING_MAX_CALLPATH_DEPTH would be folded anyway: not missing.
    Frame& f = loc->frames[loc->depth - 1];
    const Frame& up = loc->frames[loc->depth - 2];
    f.enter_time = path_key(up.node ? full.open_key : up.enter_time, region);
    if (full.open_depth + (loc->depth - full.open_frames) <= loc->profile_max_depth) full.missing.add(f.enter_time);
    return nullptr;
  }
  NodeArena& a = loc->arena;
  if (static_cast<std::size_t>(a.end - a.pos) < node_bytes(loc)) {
    bool ok = false;
    if (full.misses >= full.retry_at) {
      int saved = errno;
      ok = runtime::profile_chunk(loc);
      errno = saved;
      // The pool is asked again only now and then: each try takes the process lock.
      if (!ok) full.retry_at = full.misses + 256;
    }
    if (!ok) {
      ++full.misses;
      std::uint64_t key = path_key(reinterpret_cast<std::uintptr_t>(parent), region);
      full.missing.add(key);
      const RegionId full_region = runtime::memory_full_region(true);
      if (full_region == kNoRegion) {  // measurement is shutting down: fold into the parent
        ++loc->profile_folded;
        return nullptr;
      }
      full.open_key = key;
      full.open_frames = loc->depth;
      full.open_depth = loc->profile_depth + 1;
      return full_child(loc, parent, full_region);
    }
  }
  return arena_node(loc, parent, region);
}

void visits_doubled(const ProfileNode* n) {
  int saved = errno;
  regions::consider_throttle(n->region, n->visits, n->incl_ticks);
  errno = saved;
}

void count_too_deep(Location* loc) {
  const ProfileNode* node = loc->current_node;
  // The spare PROFILE MEMORY FULL node stands for a different call path each time and is not
  // in the profile: its visits and time belong to its parent.
  const bool spare = node == &loc->full.spare;
  if (spare) node = node->parent;
  int saved = errno;
  try {
    if (!loc->too_deep) loc->too_deep = new std::unordered_map<const ProfileNode*, std::uint64_t>;
    std::uint64_t* count = &(*loc->too_deep)[node];
    ++*count;
    if (!spare) {
      loc->too_deep_node = node;
      loc->too_deep_count = count;
    }
  } catch (...) {
    // No memory: the visit stays in profile_too_deep only (no exception crosses a hook).
  }
  errno = saved;
}

ProfileNode* attach_child(Location* loc, ProfileNode* parent, RegionId region) {
  if (ProfileNode* c = child_of(parent, region)) return c;
  NodeArena& a = loc->arena;
  if (static_cast<std::size_t>(a.end - a.pos) < node_bytes(loc) && !runtime::profile_chunk_unlocked(loc)) return nullptr;
  return arena_node(loc, parent, region);
}

namespace {
/// An Enter or Leave record carrying the location's metric values (two per payload slot); aux =
/// the location's OTF2 metric class.
bool put_values(Location* loc, Timestamp t, RecordType type, RegionId region, const std::uint64_t* v) {
  const unsigned n = loc->metric_count, slots = (n + 1) / 2;
  Record* r = loc->trace.try_reserve(slots);
  if (PROF_UNLIKELY(!r)) {
    r = reserve_slow(loc, t, slots);
    if (!r) return false;
  }
  r->time = t;
  r->type = type;
  r->slots = static_cast<std::uint8_t>(slots);
  r->aux = loc->metric_class;
  r->ref = region;
  auto* p = reinterpret_cast<std::uint64_t*>(r + 1);
  std::memcpy(p, v, n * sizeof(std::uint64_t));
  if (n & 1) p[n] = 0;
  loc->trace.commit();
  return true;
}
}  // namespace

bool metrics_enter(Location* loc, Timestamp t, RegionId region) {
  std::uint64_t* v = loc->metric_frames + std::size_t{loc->depth - 1} * loc->metric_count;
  metrics::read(loc, v);
  return !loc->tracing || put_values(loc, t, RecordType::Enter, region, v);
}

void metrics_leave(Location* loc, Timestamp t, RegionId region, ProfileNode* node, bool trace) {
  std::uint64_t now[metrics::kMaxMetrics];
  metrics::read(loc, now);
  if (loc->tracing && trace) put_values(loc, t, RecordType::Leave, region, now);
  if (node && node->metrics) {
    const std::uint64_t* at_enter = loc->metric_frames + std::size_t{loc->depth} * loc->metric_count;
    auto* sum = reinterpret_cast<std::uint64_t*>(node + 1);
    for (unsigned i = 0; i < node->metrics; ++i) sum[i] += now[i] - at_enter[i];
  }
}

Record* reserve_slow(Location* loc, Timestamp t, unsigned slots) {
  int saved = errno;
  Record* r = runtime::reserve_slow(loc, t, slots);
  errno = saved;
  return r;
}

DeferredEvent* more_deferred_room(Location* loc) {
  const int saved = errno;
  void* p = ::mmap(nullptr, kDeferredMore * sizeof(DeferredEvent), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  DeferredEvent* mine = p == MAP_FAILED ? nullptr : static_cast<DeferredEvent*>(p);
  DeferredEvent* seen = nullptr;
  // A nested handler may have mapped it meanwhile: theirs stays.
  if (mine && !loc->deferred_more.compare_exchange_strong(seen, mine, std::memory_order_relaxed)) {
    ::munmap(p, kDeferredMore * sizeof(DeferredEvent));
    mine = seen;
  }
  errno = saved;
  return mine;
}

void drain_deferred(Location* loc) {
  if (loc->busy) return;  // the hook that is running drains them when it is done
  loc->busy = true;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  std::uint32_t done = 0;
  // The replayed events' times, raised to what the trace holds already (a record written after
  // the handler's, or a flush's): the current chunk is scanned once, and again after a flush
  // (a scan per event made 16,512 replays take 100 ms).
  Timestamp floor = 0;
  std::uint64_t flushes = ~std::uint64_t{0};
  for (;;) {
    std::uint32_t n = loc->deferred_count.load(std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    for (; done < n; ++done) {
      DeferredEvent e =
          done < kDeferredEvents ? loc->deferred[done] : loc->deferred_more.load(std::memory_order_relaxed)[done - kDeferredEvents];
      // Replayed only while measuring: finalize may have closed this location's frames.
      if (loc->active && g_phase.load(std::memory_order_relaxed) == static_cast<int>(Phase::Within)) {
        if (loc->tracing) {
          if (loc->flushes != flushes) {
            flushes = loc->flushes;
            floor = std::max(floor, loc->trace.last_time());
          }
          if (e.time < floor) e.time = floor;
          floor = e.time;
        }
        e.replay(loc, e);
        ++loc->replayed_events;
      } else {
        ++loc->late_reentries;
      }
    }
    // A handler that deferred more meanwhile raised the count: go on with those.
    if (loc->deferred_count.compare_exchange_strong(n, 0, std::memory_order_relaxed)) break;
  }
  std::atomic_signal_fence(std::memory_order_seq_cst);
  loc->busy = false;
}

}  // namespace detail

void unwind_to(Location* loc, std::uintptr_t cfa) {
  loc->unwind_check = false;
  if (!cfa) return;
  Timestamp t = 0;
  while (loc->depth > 0) {
    Frame& f = loc->frames[loc->depth - 1];
    if (f.cfa == 0 || f.cfa >= cfa) break;  // still live: at or above the current stack pointer
    if (!t) t = timer::now();
    if (loc->repairs++ == 0) {
      loc->first_repaired = f.region;
      loc->first_repair_by = kRepairByJump;
    }
    detail::pop(loc, t);
  }
}

namespace {
/// What unwind_to_entry's stack walk looks for. The walk's _Unwind_GetCFA gives each frame's
/// stack pointer (the CFA of the frame it called), so the frame whose value is the hook's CFA is
/// the instrumented function's (the hook's caller, also when the hook tail-called prof), and the
/// next frame's value is that function's own CFA.
struct HookCaller {
  std::uintptr_t hook_cfa;
  std::uintptr_t start = 0;  ///< the start of the instrumented function's code (its unwind entry)
  std::uintptr_t cfa = 0;    ///< its CFA (0: not found)
  unsigned frames = 0;
};

_Unwind_Reason_Code find_hook_caller(_Unwind_Context* ctx, void* arg) {
  auto* h = static_cast<HookCaller*>(arg);
  const auto sp = static_cast<std::uintptr_t>(_Unwind_GetCFA(ctx));
  if (h->start) {
    h->cfa = sp;
    return _URC_END_OF_STACK;
  }
  if (sp == h->hook_cfa) {
    h->start = static_cast<std::uintptr_t>(_Unwind_GetRegionStart(ctx));
    if (!h->start) return _URC_END_OF_STACK;
  } else if (sp > h->hook_cfa || ++h->frames > 32) {
    return _URC_END_OF_STACK;  // passed it: not found
  }
  return _URC_NO_REASON;
}
}  // namespace

void unwind_to_entry(Location* loc, RegionId region, std::uintptr_t cfa) {
  std::uintptr_t bound = cfa;
  if (cfa) {
    HookCaller h{cfa};
    _Unwind_Backtrace(&find_hook_caller, &h);
    // The hook of a function inlined into its caller runs in the caller's frame, whose open
    // frames are live: only the function's own entry moves the bound.
    if (h.cfa > cfa && h.start == regions::entry_of(region)) bound = h.cfa;
  }
  unwind_to(loc, bound);
}

bool event(Location* loc, Timestamp t, RecordType type, std::uint32_t ref, std::uint64_t value) {
  if (!loc->tracing) return false;
  Record* r = loc->trace.try_reserve(1);
  if (PROF_UNLIKELY(!r)) {
    r = detail::reserve_slow(loc, t, 1);
    if (!r) return false;
  }
  r->time = t;
  r->type = type;
  r->slots = 1;
  r->aux = 0;
  r->ref = ref;
  auto* p = reinterpret_cast<Payload*>(r + 1);
  p->a = value;
  p->b = 0;
  loc->trace.commit();
  return true;
}

bool event(Location* loc, Timestamp t, RecordType type, std::uint32_t ref, std::uint16_t aux, const Payload* p, unsigned n) {
  if (!loc->tracing) return false;
  Record* r = loc->trace.try_reserve(n);
  if (PROF_UNLIKELY(!r)) {
    r = detail::reserve_slow(loc, t, n);
    if (!r) return false;
  }
  r->time = t;
  r->type = type;
  r->slots = static_cast<std::uint8_t>(n);
  r->aux = aux;
  r->ref = ref;
  auto* slots = reinterpret_cast<Payload*>(r + 1);
  for (unsigned i = 0; i < n; ++i) slots[i] = p[i];
  loc->trace.commit();
  return true;
}

ProfileNode* adopt_call_path(Location* loc, const ProfileNode* path) {
  if (!loc->profiling || !path || path == loc->current_node) return nullptr;
  // The path's regions, root excluded, innermost first.
  RegionId regions[256];
  std::uint32_t depth = 0;
  for (const ProfileNode* n = path; n && n->parent && depth < 256; n = n->parent) regions[depth++] = n->region;
  ProfileNode* node = &loc->root_node;
  for (std::uint32_t i = depth; i-- > 0;) {
    node = detail::attach_child(loc, node, regions[i]);
    if (!node) return nullptr;
  }
  ProfileNode* saved = loc->current_node;
  loc->current_node = node;
  loc->profile_depth = depth;
  return saved;
}

void restore_call_path(Location* loc, ProfileNode* saved, ProfileNode* adopted) {
  if (!saved || loc->current_node != adopted) return;  // frames still open (the end): they close as they are
  std::uint32_t depth = 0;
  for (ProfileNode* n = saved; n && n != &loc->root_node; n = n->parent) ++depth;
  loc->profile_depth = depth;
  loc->current_node = saved;
}

std::uint32_t close_all_frames(Location* loc, Timestamp t) {
  std::uint32_t n = loc->depth;
  while (loc->depth > 0) detail::pop(loc, t);
  loc->closed_at_end += n;
  return n;
}

void set_recording(bool on) {
  InProf in;
  if (g_recording == on) return;
  g_recording = on;
  if (in.loc && in.loc->tracing) detail::put(in.loc, timer::now(), RecordType::MeasurementOnOff, on ? 1u : 2u);
}

}  // namespace prof
