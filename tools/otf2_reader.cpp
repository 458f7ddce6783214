// SPDX-License-Identifier: BSD-3-Clause
// OTF2 archive reading for prof's tools: the OTF2 library's reader behind plain tables and a sink.
#include "tools/otf2_reader.hpp"

#include <otf2/otf2.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace prof::otf2 {

namespace {

const std::string kEmpty;

// The OTF2 library prints "[OTF2] src/...: error: ..." lines to stderr on any error it meets
// (a damaged file gives several, from each level it passes through). The tools say what went
// wrong in one line of their own, so the library's first message since the last clear() is kept
// here instead and becomes part of that line.
std::string& otf2_message() {
  static std::string m;
  return m;
}

OTF2_ErrorCode on_otf2_error(void*, const char*, uint64_t, const char*, OTF2_ErrorCode code, const char* format,
                             va_list va) {
  std::string& m = otf2_message();
  if (!m.empty()) return code;
  char buf[512];
  std::vsnprintf(buf, sizeof buf, format ? format : "", va);
  m = buf;
  if (m.empty()) m = OTF2_Error_GetDescription(code);
  for (char& c : m)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  return code;
}

void capture_otf2_messages() {
  static const bool once = (OTF2_Error_RegisterCallback(on_otf2_error, nullptr), true);
  (void)once;
  otf2_message().clear();
}

// " (OTF2: <its message>)", or the description of the code when the library said nothing.
std::string otf2_says(OTF2_ErrorCode rc) {
  const std::string& m = otf2_message();
  return " (OTF2: " + (m.empty() ? std::string(OTF2_Error_GetDescription(rc)) : m) + ")";
}

// The largest region reference the tools take: they index tables by it (16M regions; OTF2 writers
// number their definitions from 0 up, so anything beyond is a damaged reference).
constexpr std::uint32_t kMaxRegionRef = 1u << 24;

Definitions& defs_of(void* data) { return *static_cast<Definitions*>(data); }

OTF2_CallbackCode def_string(void* d, OTF2_StringRef self, const char* s) {
  defs_of(d).strings[self] = s ? s : "";
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode def_clock(void* d, uint64_t resolution, uint64_t offset, uint64_t length, uint64_t realtime) {
  Definitions& defs = defs_of(d);
  defs.timer_resolution = resolution;
  defs.global_offset = offset;
  defs.trace_length = length;
  defs.realtime_ns = realtime == OTF2_UNDEFINED_TIMESTAMP ? 0 : realtime;
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode def_node(void* d, OTF2_SystemTreeNodeRef self, OTF2_StringRef name, OTF2_StringRef cls,
                           OTF2_SystemTreeNodeRef parent) {
  Definitions& defs = defs_of(d);
  defs.nodes[self] = SystemTreeNode{defs.str(name), defs.str(cls), parent};
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode def_group(void* d, OTF2_LocationGroupRef self, OTF2_StringRef name, OTF2_LocationGroupType type,
                            OTF2_SystemTreeNodeRef node, OTF2_LocationGroupRef creator) {
  Definitions& defs = defs_of(d);
  defs.groups[self] = LocationGroup{defs.str(name), type, node, creator};
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode def_location(void* d, OTF2_LocationRef self, OTF2_StringRef name, OTF2_LocationType type,
                               uint64_t events, OTF2_LocationGroupRef group) {
  Definitions& defs = defs_of(d);
  defs.locations.push_back(Location{self, defs.str(name), type, group, events});
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode def_region(void* d, OTF2_RegionRef self, OTF2_StringRef name, OTF2_StringRef, OTF2_StringRef,
                             OTF2_RegionRole role, OTF2_Paradigm paradigm, OTF2_RegionFlag, OTF2_StringRef file,
                             uint32_t, uint32_t) {
  Definitions& defs = defs_of(d);
  defs.regions[self] = Region{defs.str(name), defs.str(file), paradigm, role};
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode def_metric_member(void* d, OTF2_MetricMemberRef self, OTF2_StringRef name, OTF2_StringRef description,
                                    OTF2_MetricType, OTF2_MetricMode mode, OTF2_Type type, OTF2_Base, int64_t,
                                    OTF2_StringRef unit) {
  Definitions& defs = defs_of(d);
  defs.metric_members[self] = MetricMember{defs.str(name), defs.str(unit), defs.str(description), type, mode};
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode def_metric_class(void* d, OTF2_MetricRef self, uint8_t n, const OTF2_MetricMemberRef* members,
                                   OTF2_MetricOccurrence, OTF2_RecorderKind) {
  defs_of(d).metric_classes[self].assign(members, members + n);
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode def_comm_group(void* d, OTF2_GroupRef self, OTF2_StringRef, OTF2_GroupType type, OTF2_Paradigm paradigm,
                                 OTF2_GroupFlag, uint32_t n, const uint64_t* members) {
  Group& g = defs_of(d).comm_groups[self];
  g.type = type;
  g.paradigm = paradigm;
  g.members.assign(members, members + n);
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode def_comm(void* d, OTF2_CommRef self, OTF2_StringRef, OTF2_GroupRef group, OTF2_CommRef, OTF2_CommFlag) {
  defs_of(d).comms[self] = group;
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode def_calling_context(void* d, OTF2_CallingContextRef self, OTF2_RegionRef region,
                                      OTF2_SourceCodeLocationRef, OTF2_CallingContextRef parent) {
  defs_of(d).calling_contexts[self] = CallingContext{region, parent};
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode def_attribute(void* d, OTF2_AttributeRef self, OTF2_StringRef name, OTF2_StringRef, OTF2_Type) {
  Definitions& defs = defs_of(d);
  if (defs.str(name) == "CUDA correlation id") defs.correlation_attribute = self;
  return OTF2_CALLBACK_SUCCESS;
}

// Events: the user data is the reader's state.
struct ReadState {
  EventSink* sink;
  const Definitions* defs;
  std::uint32_t correlation_attribute;
  std::uint64_t events = 0;
  std::string error;  // why a callback stopped the reading: a reference the definitions lack
};

// A reference in an event that the definitions do not have: the reading stops (the sinks index
// their tables by region) and the reader says which.
OTF2_CallbackCode bad_ref(void* d, OTF2_LocationRef l, const char* event, const char* what, std::uint64_t ref) {
  auto* s = static_cast<ReadState*>(d);
  s->error = std::string(event) + " of location " + std::to_string(l) + " (event " + std::to_string(s->events + 1) +
             ") refers to " + what + " " + std::to_string(ref) + ", which the definitions do not have";
  return OTF2_CALLBACK_INTERRUPT;
}

bool region_ok(void* d, OTF2_RegionRef r) {
  const Definitions& defs = *static_cast<ReadState*>(d)->defs;
  return r < defs.region_defined.size() && defs.region_defined[r];
}

void attributes_of(void* d, OTF2_LocationRef l, OTF2_TimeStamp t, OTF2_AttributeList* a) {
  auto* s = static_cast<ReadState*>(d);
  if (!a || s->correlation_attribute == kUndefined32 || OTF2_AttributeList_GetNumberOfElements(a) == 0) return;
  uint32_t id = 0;
  if (OTF2_AttributeList_GetUint32(a, s->correlation_attribute, &id) == OTF2_SUCCESS) s->sink->correlation(l, t, id);
}

EventSink& sink_of(void* d) {
  auto* s = static_cast<ReadState*>(d);
  ++s->events;
  return *s->sink;
}

OTF2_CallbackCode ev_enter(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList* a, OTF2_RegionRef r) {
  if (!region_ok(d, r)) return bad_ref(d, l, "an Enter", "region", r);
  attributes_of(d, l, t, a);
  sink_of(d).enter(l, t, r);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode ev_leave(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList* a, OTF2_RegionRef r) {
  if (!region_ok(d, r)) return bad_ref(d, l, "a Leave", "region", r);
  attributes_of(d, l, t, a);
  sink_of(d).leave(l, t, r);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode ev_metric(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList*, OTF2_MetricRef m,
                            uint8_t n, const OTF2_Type* types, const OTF2_MetricValue* values) {
  std::uint64_t raw[256];
  for (unsigned i = 0; i < n; ++i) std::memcpy(&raw[i], &values[i], sizeof raw[i]);
  sink_of(d).metric(l, t, m, n, types, raw);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode ev_send(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList*, uint32_t peer,
                          OTF2_CommRef comm, uint32_t tag, uint64_t bytes) {
  sink_of(d).message(l, t, true, peer, comm, tag, bytes);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode ev_isend(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList*, uint32_t peer,
                           OTF2_CommRef comm, uint32_t tag, uint64_t bytes, uint64_t) {
  sink_of(d).message(l, t, true, peer, comm, tag, bytes);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode ev_recv(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList*, uint32_t peer,
                          OTF2_CommRef comm, uint32_t tag, uint64_t bytes) {
  sink_of(d).message(l, t, false, peer, comm, tag, bytes);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode ev_irecv(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList*, uint32_t peer,
                           OTF2_CommRef comm, uint32_t tag, uint64_t bytes, uint64_t) {
  sink_of(d).message(l, t, false, peer, comm, tag, bytes);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode ev_coll_end(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList*, OTF2_CollectiveOp op,
                              OTF2_CommRef comm, uint32_t root, uint64_t sent, uint64_t received) {
  sink_of(d).collective_end(l, t, op, comm, root, sent, received);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode ev_nb_coll(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList*, OTF2_CollectiveOp op,
                             OTF2_CommRef comm, uint32_t root, uint64_t sent, uint64_t received, uint64_t) {
  sink_of(d).collective_end(l, t, op, comm, root, sent, received);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode ev_put(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList*, OTF2_RmaWinRef,
                         uint32_t remote, uint64_t bytes, uint64_t) {
  sink_of(d).rma(l, t, false, remote, bytes);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode ev_get(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList*, OTF2_RmaWinRef,
                         uint32_t remote, uint64_t bytes, uint64_t) {
  sink_of(d).rma(l, t, true, remote, bytes);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode ev_sample(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList*,
                            OTF2_CallingContextRef cc, uint32_t, OTF2_InterruptGeneratorRef) {
  if (!static_cast<ReadState*>(d)->defs->calling_contexts.count(cc)) return bad_ref(d, l, "a sample", "calling context", cc);
  sink_of(d).sample(l, t, cc);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode ev_flush(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList*, OTF2_TimeStamp stop) {
  sink_of(d).buffer_flush(l, t, stop);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode ev_on_off(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList*, OTF2_MeasurementMode m) {
  sink_of(d).measurement_on_off(l, t, m == OTF2_MEASUREMENT_ON);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode ev_program_begin(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList*,
                                   OTF2_StringRef name, uint32_t n, const OTF2_StringRef* args) {
  const Definitions& defs = *static_cast<ReadState*>(d)->defs;
  std::vector<std::string> a;
  for (uint32_t i = 0; i < n; ++i) a.push_back(defs.str(args[i]));
  sink_of(d).program_begin(l, t, defs.str(name), a);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode ev_other(OTF2_LocationRef, OTF2_TimeStamp, void* d, OTF2_AttributeList*) {
  ++static_cast<ReadState*>(d)->events;
  return OTF2_CALLBACK_SUCCESS;
}

// What is wrong with the definitions ("" when nothing): references to definitions that do not
// exist, or region references too large to index by.
std::string check_definitions(Definitions& defs) {
  auto undefined_or = [](std::uint32_t ref, const auto& table) { return ref == kUndefined32 || table.count(ref) != 0; };
  const auto bad = [](const std::string& what, std::uint64_t self, const char* field, std::uint64_t ref) {
    return what + " " + std::to_string(self) + " refers to " + field + " " + std::to_string(ref) +
           ", which the definitions do not have";
  };
  if (defs.timer_resolution == 0) return "the clock properties give a timer resolution of 0 ticks per second";
  std::uint32_t max_region = 0;
  for (const auto& [ref, r] : defs.regions) {
    if (ref >= kMaxRegionRef)
      return "region reference " + std::to_string(ref) + " is out of range (at most " + std::to_string(kMaxRegionRef) +
             " regions)";
    max_region = std::max(max_region, ref + 1);
  }
  defs.region_defined.assign(max_region, false);
  for (const auto& [ref, r] : defs.regions) defs.region_defined[ref] = true;
  for (const auto& [ref, n] : defs.nodes)
    if (!undefined_or(n.parent, defs.nodes)) return bad("system tree node", ref, "parent node", n.parent);
  for (const auto& [ref, g] : defs.groups) {
    if (!undefined_or(g.node, defs.nodes)) return bad("location group", ref, "system tree node", g.node);
    if (!undefined_or(g.creator, defs.groups)) return bad("location group", ref, "creating location group", g.creator);
  }
  for (const Location& l : defs.locations)
    if (!defs.groups.count(l.group)) return bad("location", l.ref, "location group", l.group);
  for (const auto& [ref, members] : defs.metric_classes)
    for (std::uint32_t m : members)
      if (!defs.metric_members.count(m)) return bad("metric class", ref, "metric member", m);
  for (const auto& [ref, group] : defs.comms)
    if (!defs.comm_groups.count(group)) return bad("communicator", ref, "group", group);
  for (const auto& [ref, c] : defs.calling_contexts) {
    if (!defs.regions.count(c.region)) return bad("calling context", ref, "region", c.region);
    if (!undefined_or(c.parent, defs.calling_contexts)) return bad("calling context", ref, "parent context", c.parent);
  }
  return "";
}

bool file_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

const std::string& Definitions::str(std::uint32_t ref) const {
  auto it = strings.find(ref);
  return it == strings.end() ? kEmpty : it->second;
}

std::string Definitions::host_of(std::uint32_t group) const {
  auto g = groups.find(group);
  if (g == groups.end()) return "";
  std::uint32_t n = g->second.node;
  std::string fallback;
  for (int depth = 0; depth < 64 && n != kUndefined32; ++depth) {
    auto it = nodes.find(n);
    if (it == nodes.end()) break;
    if (fallback.empty()) fallback = it->second.name;
    if (it->second.class_name == "node") return it->second.name;
    n = it->second.parent;
  }
  return fallback;
}

ProcessMap::ProcessMap(const Definitions& defs) : defs_(defs) {
  for (const auto& [ref, g] : defs.groups)
    if (g.type == kGroupProcess) {
      index_[ref] = static_cast<std::uint32_t>(groups_.size());
      groups_.push_back(ref);
    }
}

bool ProcessMap::process_of(const Location& d, std::uint32_t* process) const {
  std::uint32_t group = d.group;
  auto g = defs_.groups.find(group);
  if (g != defs_.groups.end() && g->second.type != kGroupProcess && g->second.creator != kUndefined32) group = g->second.creator;
  auto p = index_.find(group);
  if (p == index_.end()) return false;
  *process = p->second;
  return true;
}

LocationKind ProcessMap::kind(const Location& d) {
  if (d.type == kLocationGpuStream) return LocationKind::Stream;
  if (d.type != kLocationCpuThread) return LocationKind::Other;
  return d.name.rfind("NVTX ", 0) == 0 ? LocationKind::Lane : LocationKind::Thread;
}

MpiRanks::MpiRanks(const Definitions& defs) : defs_(defs) {
  for (const auto& [ref, g] : defs.comm_groups)
    if (g.type == 4 /* OTF2_GROUP_TYPE_COMM_LOCATIONS */ && g.paradigm == kParadigmMpi) locations_ = g.members;
  for (std::size_t i = 0; i < locations_.size(); ++i) world_[locations_[i]] = static_cast<std::uint32_t>(i);
}

std::uint32_t MpiRanks::world_rank(std::uint64_t location) const {
  auto it = world_.find(location);
  return it == world_.end() ? kUndefined32 : it->second;
}

const std::vector<std::uint64_t>* MpiRanks::members(std::uint32_t comm) const {
  auto c = defs_.comms.find(comm);
  if (c == defs_.comms.end()) return nullptr;
  auto g = defs_.comm_groups.find(c->second);
  return g == defs_.comm_groups.end() ? nullptr : &g->second.members;
}

std::uint32_t MpiRanks::rank_in(std::uint32_t comm, std::uint32_t world) {
  if (world == kUndefined32) return kUndefined32;
  const std::uint64_t key = static_cast<std::uint64_t>(comm) << 32 | world;
  auto it = rank_cache_.find(key);
  if (it != rank_cache_.end()) return it->second;
  std::uint32_t r = kUndefined32;
  if (const std::vector<std::uint64_t>* m = members(comm)) {
    if (m->empty()) r = 0;  // COMM_SELF
    for (std::size_t i = 0; i < m->size(); ++i)
      if ((*m)[i] == world) r = static_cast<std::uint32_t>(i);
  }
  rank_cache_[key] = r;
  return r;
}

std::uint32_t MpiRanks::world_of(std::uint32_t comm, std::uint32_t rank) const {
  const std::vector<std::uint64_t>* m = members(comm);
  if (!m || rank >= m->size()) return kUndefined32;
  return static_cast<std::uint32_t>((*m)[rank]);
}

std::uint64_t MpiRanks::location_of(std::uint32_t world) const {
  return world < locations_.size() ? locations_[world] : kUndefined64;
}

struct Reader::Impl {
  OTF2_Reader* reader = nullptr;
  std::string anchor;
};

Reader::Reader() : impl_(new Impl) {}

Reader::~Reader() {
  if (impl_->reader) OTF2_Reader_Close(impl_->reader);
  delete impl_;
}

bool Reader::open(const std::string& anchor) {
  impl_->anchor = anchor;
  capture_otf2_messages();
  if (!file_exists(anchor)) {
    error_ = anchor + " does not exist";
    return false;
  }
  impl_->reader = OTF2_Reader_Open(anchor.c_str());
  if (!impl_->reader) {
    error_ = "it is no OTF2 anchor file" + otf2_says(OTF2_ERROR_INVALID);
    damaged_ = true;
    return false;
  }
  OTF2_Reader_SetSerialCollectiveCallbacks(impl_->reader);
  OTF2_GlobalDefReader* gdr = OTF2_Reader_GetGlobalDefReader(impl_->reader);
  if (!gdr) {
    error_ = "its global definitions cannot be read" + otf2_says(OTF2_ERROR_INVALID);
    damaged_ = true;
    return false;
  }
  OTF2_GlobalDefReaderCallbacks* cb = OTF2_GlobalDefReaderCallbacks_New();
  OTF2_GlobalDefReaderCallbacks_SetStringCallback(cb, def_string);
  OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(cb, def_clock);
  OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeCallback(cb, def_node);
  OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(cb, def_group);
  OTF2_GlobalDefReaderCallbacks_SetLocationCallback(cb, def_location);
  OTF2_GlobalDefReaderCallbacks_SetRegionCallback(cb, def_region);
  OTF2_GlobalDefReaderCallbacks_SetMetricMemberCallback(cb, def_metric_member);
  OTF2_GlobalDefReaderCallbacks_SetMetricClassCallback(cb, def_metric_class);
  OTF2_GlobalDefReaderCallbacks_SetGroupCallback(cb, def_comm_group);
  OTF2_GlobalDefReaderCallbacks_SetCommCallback(cb, def_comm);
  OTF2_GlobalDefReaderCallbacks_SetCallingContextCallback(cb, def_calling_context);
  OTF2_GlobalDefReaderCallbacks_SetAttributeCallback(cb, def_attribute);
  OTF2_Reader_RegisterGlobalDefCallbacks(impl_->reader, gdr, cb, &defs_);
  OTF2_GlobalDefReaderCallbacks_Delete(cb);
  uint64_t n = 0;
  OTF2_ErrorCode rc = OTF2_Reader_ReadAllGlobalDefinitions(impl_->reader, gdr, &n);
  if (rc != OTF2_SUCCESS) {
    error_ = "its global definitions are damaged" + otf2_says(rc);
    damaged_ = true;
    return false;
  }
  const std::string wrong = check_definitions(defs_);
  if (!wrong.empty()) {
    error_ = "its definitions are damaged: " + wrong;
    damaged_ = true;
    return false;
  }
  return true;
}

bool Reader::read_events(EventSink& sink, const std::vector<std::uint64_t>& wanted) {
  OTF2_Reader* r = impl_->reader;
  events_read_ = 0;
  if (!r) return false;
  capture_otf2_messages();
  // The location directory beside the anchor: <dir>/<name>/<location>.evt.
  std::string base = impl_->anchor;
  if (base.size() > 5 && base.compare(base.size() - 5, 5, ".otf2") == 0) base.resize(base.size() - 5);
  std::vector<std::uint64_t> selected;
  for (const Location& loc : defs_.locations) {
    if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), loc.ref) == wanted.end()) continue;
    if (!file_exists(base + "/" + std::to_string(loc.ref) + ".evt")) {
      if (loc.events) warnings_.push_back("location " + std::to_string(loc.ref) + " (" + loc.name + ") has no event file: its " +
                                          std::to_string(loc.events) + " events are missing");
      continue;
    }
    selected.push_back(loc.ref);
  }
  for (std::uint64_t l : selected) OTF2_Reader_SelectLocation(r, l);
  if (selected.empty()) return true;
  // Local definitions carry the mapping tables and clock offsets that OTF2 applies to the events.
  const bool have_defs = OTF2_Reader_OpenDefFiles(r) == OTF2_SUCCESS;
  OTF2_Reader_OpenEvtFiles(r);
  for (std::uint64_t l : selected) {
    if (have_defs) {
      OTF2_DefReader* dr = OTF2_Reader_GetDefReader(r, l);
      if (dr) {
        uint64_t n = 0;
        const OTF2_ErrorCode rc = OTF2_Reader_ReadAllLocalDefinitions(r, dr, &n);
        OTF2_Reader_CloseDefReader(r, dr);
        if (rc != OTF2_SUCCESS) {
          // Its events' references could not be mapped to the global ones.
          error_ = "the local definitions of location " + std::to_string(l) + " are damaged" + otf2_says(rc);
          damaged_ = true;
          OTF2_Reader_CloseDefFiles(r);
          OTF2_Reader_CloseEvtFiles(r);
          return false;
        }
      }
    }
    OTF2_Reader_GetEvtReader(r, l);
  }
  if (have_defs) OTF2_Reader_CloseDefFiles(r);
  OTF2_GlobalEvtReader* ger = OTF2_Reader_GetGlobalEvtReader(r);
  if (!ger) {
    error_ = "its events cannot be read" + otf2_says(OTF2_ERROR_INVALID);
    damaged_ = true;
    return false;
  }
  OTF2_GlobalEvtReaderCallbacks* cb = OTF2_GlobalEvtReaderCallbacks_New();
  OTF2_GlobalEvtReaderCallbacks_SetEnterCallback(cb, ev_enter);
  OTF2_GlobalEvtReaderCallbacks_SetLeaveCallback(cb, ev_leave);
  OTF2_GlobalEvtReaderCallbacks_SetMetricCallback(cb, ev_metric);
  OTF2_GlobalEvtReaderCallbacks_SetMpiSendCallback(cb, ev_send);
  OTF2_GlobalEvtReaderCallbacks_SetMpiIsendCallback(cb, ev_isend);
  OTF2_GlobalEvtReaderCallbacks_SetMpiRecvCallback(cb, ev_recv);
  OTF2_GlobalEvtReaderCallbacks_SetMpiIrecvCallback(cb, ev_irecv);
  OTF2_GlobalEvtReaderCallbacks_SetMpiCollectiveEndCallback(cb, ev_coll_end);
  OTF2_GlobalEvtReaderCallbacks_SetNonBlockingCollectiveCompleteCallback(cb, ev_nb_coll);
  OTF2_GlobalEvtReaderCallbacks_SetRmaPutCallback(cb, ev_put);
  OTF2_GlobalEvtReaderCallbacks_SetRmaGetCallback(cb, ev_get);
  OTF2_GlobalEvtReaderCallbacks_SetCallingContextSampleCallback(cb, ev_sample);
  OTF2_GlobalEvtReaderCallbacks_SetBufferFlushCallback(cb, ev_flush);
  OTF2_GlobalEvtReaderCallbacks_SetMeasurementOnOffCallback(cb, ev_on_off);
  OTF2_GlobalEvtReaderCallbacks_SetProgramBeginCallback(cb, ev_program_begin);
  OTF2_GlobalEvtReaderCallbacks_SetUnknownCallback(cb, ev_other);
  ReadState state{&sink, &defs_, defs_.correlation_attribute, 0, {}};
  OTF2_Reader_RegisterGlobalEvtCallbacks(r, ger, cb, &state);
  OTF2_GlobalEvtReaderCallbacks_Delete(cb);
  bool ok = true;
  std::uint64_t total = 0;
  for (;;) {
    uint64_t n = 0;
    OTF2_ErrorCode rc = OTF2_Reader_ReadGlobalEvents(r, ger, 1 << 16, &n);
    if (rc != OTF2_SUCCESS) {
      if (!state.error.empty()) error_ = "its events are damaged: " + state.error;
      else error_ = "its events are damaged after " + std::to_string(state.events) + " of them" + otf2_says(rc);
      damaged_ = true;
      ok = false;
      break;
    }
    total += n;
    events_read_ = total;
    if (n == 0 || !sink.keep_going()) break;
  }
  OTF2_Reader_CloseGlobalEvtReader(r, ger);
  OTF2_Reader_CloseEvtFiles(r);
  return ok;
}

}  // namespace prof::otf2
