// SPDX-License-Identifier: BSD-3-Clause
// TraceWriter: raw records → OTF2 events; definitions at the end. OTF2's event chunks come
// from a bounded block pool (one block per open writer: needing a second one makes OTF2 write
// the buffer to disk), and OTF2's own BufferFlush record is disabled (no post-flush callback):
// prof writes BufferFlush records itself, with the real start and end of its own flushes.
#include "otf2-writer/trace_writer.hpp"

#include <otf2/otf2.h>

#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include "measurement/record.hpp"

namespace prof::otf2w {

namespace {
struct BufferMemory {
  void* block = nullptr;   // event buffers: at most one chunk from the pool
  bool from_pool = false;
  std::vector<void*> heap;  // other buffers (definitions): plain malloc
};
}  // namespace

struct TraceWriter::Impl {
  OTF2_Archive* archive = nullptr;
  ChunkPool* blocks = nullptr;
  struct Loc {
    OTF2_EvtWriter* writer = nullptr;
    std::uint64_t events = 0;
    Timestamp last = 0;
    bool closed = false;
  };
  std::unordered_map<std::uint64_t, Loc> locs;
  std::unordered_map<std::string, OTF2_StringRef> strings;
  std::vector<std::string> string_list;
  OTF2_StringRef program = 0;
  std::vector<OTF2_StringRef> args;
  WriterStats stats;
  std::string error;

  OTF2_StringRef str(const std::string& s) {
    auto it = strings.find(s);
    if (it != strings.end()) return it->second;
    auto id = static_cast<OTF2_StringRef>(string_list.size());
    string_list.push_back(s);
    strings.emplace(s, id);
    return id;
  }

  // True while OTF2 writes a buffer for the last time (its writer is being closed).
  bool closing = false;

  static OTF2_FlushType pre_flush(void* data, OTF2_FileType type, OTF2_LocationRef, void*, bool final) {
    auto* self = static_cast<Impl*>(data);
    if (type == OTF2_FILETYPE_EVENTS) ++self->stats.otf2_flushes;
    self->closing = final;
    return OTF2_FLUSH;
  }

  static void* allocate(void* data, OTF2_FileType type, OTF2_LocationRef, void** per_buffer, std::uint64_t size) {
    auto* self = static_cast<Impl*>(data);
    auto* mem = static_cast<BufferMemory*>(*per_buffer);
    if (!mem) *per_buffer = mem = new BufferMemory;
    if (type != OTF2_FILETYPE_EVENTS) {
      void* p = std::malloc(size);
      if (p) mem->heap.push_back(p);
      return p;
    }
    if (mem->block) return nullptr;  // one chunk per writer: OTF2 writes it out and asks again
    void* p = self->blocks && self->blocks->chunk_bytes() >= size ? self->blocks->acquire() : nullptr;
    mem->from_pool = p != nullptr;
    if (!p) {
      // More open writers than the budget has blocks: correct output beats the bound; counted.
      p = std::malloc(size);
      ++self->stats.otf2_over_budget;
    }
    mem->block = p;
    return p;
  }

  static void free_all(void* data, OTF2_FileType, OTF2_LocationRef, void** per_buffer, bool final) {
    auto* self = static_cast<Impl*>(data);
    auto* mem = static_cast<BufferMemory*>(*per_buffer);
    if (!mem) return;
    if (mem->block) {
      // During the run the block is reused at once; when its writer closes, OTF2 has memset
      // all of it and then needs its own file buffer: give the pages back.
      if (mem->from_pool) self->blocks->release(mem->block, final || self->closing);
      else std::free(mem->block);
      mem->block = nullptr;
    }
    for (void* p : mem->heap) std::free(p);
    mem->heap.clear();
    if (final) {
      delete mem;
      *per_buffer = nullptr;
    }
  }
};

TraceWriter::TraceWriter() : impl_(new Impl) {}

TraceWriter::~TraceWriter() {
  if (impl_->archive) OTF2_Archive_Close(impl_->archive);
}

bool TraceWriter::is_open() const { return impl_->archive != nullptr; }
const WriterStats& TraceWriter::stats() const { return impl_->stats; }
const std::string& TraceWriter::last_error() const { return impl_->error; }

bool TraceWriter::open(const std::string& dir, ChunkPool* blocks, std::string* error) {
  Impl& m = *impl_;
  m.blocks = blocks;
  std::uint64_t chunk = blocks && blocks->chunk_bytes() >= OTF2_CHUNK_SIZE_MIN ? blocks->chunk_bytes() : OTF2_CHUNK_SIZE_MIN;
  m.archive = OTF2_Archive_Open(dir.c_str(), "traces", OTF2_FILEMODE_WRITE, chunk, OTF2_CHUNK_SIZE_MIN,
                                OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  if (!m.archive) {
    *error = "cannot create the OTF2 archive in '" + dir + "'; check that the directory is writable and the disk not full";
    return false;
  }
  static const OTF2_FlushCallbacks flush_cbs = {&Impl::pre_flush, nullptr};
  static const OTF2_MemoryCallbacks mem_cbs = {&Impl::allocate, &Impl::free_all};
  OTF2_Archive_SetFlushCallbacks(m.archive, &flush_cbs, &m);
  OTF2_Archive_SetMemoryCallbacks(m.archive, &mem_cbs, &m);
  // OTF2 creates the archive's directories here; every later call "succeeds" without them.
  if (OTF2_Archive_SetSerialCollectiveCallbacks(m.archive) != OTF2_SUCCESS) {
    *error = "cannot create the OTF2 archive in '" + dir + "'; check that the directory is writable and the disk not full";
    OTF2_Archive_Close(m.archive);
    m.archive = nullptr;
    return false;
  }
  OTF2_Archive_SetCreator(m.archive, "prof " PROF_VERSION);
  OTF2_Archive_SetDescription(m.archive, "prof measurement");
  if (OTF2_Archive_OpenEvtFiles(m.archive) != OTF2_SUCCESS) {
    *error = "cannot open the OTF2 event files in '" + dir + "/traces'; check permissions and free space";
    OTF2_Archive_Close(m.archive);
    m.archive = nullptr;
    return false;
  }
  return true;
}

void TraceWriter::set_program(const std::string& name, const std::vector<std::string>& args) {
  impl_->program = impl_->str(name);
  impl_->args.clear();
  for (const auto& a : args) impl_->args.push_back(impl_->str(a));
}

std::uint64_t TraceWriter::event_count(std::uint64_t location) const {
  auto it = impl_->locs.find(location);
  return it == impl_->locs.end() ? 0 : it->second.events;
}

bool TraceWriter::write_events(std::uint64_t location, const EventBuffer& buffer, bool close) {
  Impl& m = *impl_;
  if (!m.archive) return false;
  Impl::Loc& loc = m.locs[location];
  if (loc.closed) {
    m.error = "events for an already closed location";
    return false;
  }
  if (!loc.writer) {
    loc.writer = OTF2_Archive_GetEvtWriter(m.archive, location);
    if (!loc.writer) {
      m.error = "OTF2 could not create the event writer";
      return false;
    }
  }
  OTF2_EvtWriter* w = loc.writer;
  OTF2_ErrorCode rc = OTF2_SUCCESS;
  std::uint64_t n = 0;
  buffer.for_each([&](const Record& r, const Payload* p) {
    if (rc != OTF2_SUCCESS) return;
    Timestamp t = r.time < loc.last ? loc.last : r.time;
    loc.last = t;
    switch (r.type) {
      case RecordType::Enter: rc = OTF2_EvtWriter_Enter(w, nullptr, t, r.ref); break;
      case RecordType::Leave: rc = OTF2_EvtWriter_Leave(w, nullptr, t, r.ref); break;
      case RecordType::MeasurementOnOff:
        rc = OTF2_EvtWriter_MeasurementOnOff(w, nullptr, t, static_cast<OTF2_MeasurementMode>(r.ref));
        break;
      case RecordType::BufferFlush: {
        Timestamp stop = p[0].a < t ? t : p[0].a;
        rc = OTF2_EvtWriter_BufferFlush(w, nullptr, t, stop);
        break;
      }
      case RecordType::ThreadCreate: rc = OTF2_EvtWriter_ThreadCreate(w, nullptr, t, 0, p[0].a); break;
      case RecordType::ThreadBegin: rc = OTF2_EvtWriter_ThreadBegin(w, nullptr, t, 0, p[0].a); break;
      case RecordType::ThreadEnd: rc = OTF2_EvtWriter_ThreadEnd(w, nullptr, t, 0, p[0].a); break;
      case RecordType::ThreadWait: rc = OTF2_EvtWriter_ThreadWait(w, nullptr, t, 0, p[0].a); break;
      case RecordType::AcquireLock:
        rc = OTF2_EvtWriter_ThreadAcquireLock(w, nullptr, t, OTF2_PARADIGM_PTHREAD, r.ref, static_cast<std::uint32_t>(p[0].a));
        break;
      case RecordType::ReleaseLock:
        rc = OTF2_EvtWriter_ThreadReleaseLock(w, nullptr, t, OTF2_PARADIGM_PTHREAD, r.ref, static_cast<std::uint32_t>(p[0].a));
        break;
      case RecordType::ProgramBegin:
        rc = OTF2_EvtWriter_ProgramBegin(w, nullptr, t, m.program, static_cast<std::uint32_t>(m.args.size()),
                                         m.args.empty() ? nullptr : m.args.data());
        break;
      case RecordType::ProgramEnd:
        rc = OTF2_EvtWriter_ProgramEnd(w, nullptr, t, static_cast<std::int64_t>(p[0].a));
        break;
      default: return;  // unknown records are skipped, never guessed
    }
    ++n;
  });
  loc.events += n;
  m.stats.events += n;
  if (rc != OTF2_SUCCESS) {
    m.error = std::string("OTF2 error while writing events: ") + OTF2_Error_GetDescription(rc);
    return false;
  }
  return close ? close_location(location) : true;
}

bool TraceWriter::close_location(std::uint64_t location) {
  Impl& m = *impl_;
  auto it = m.locs.find(location);
  if (it == m.locs.end() || !it->second.writer) return false;
  Impl::Loc& loc = it->second;
  std::uint64_t counted = 0;
  OTF2_EvtWriter_GetNumberOfEvents(loc.writer, &counted);
  loc.events = counted;
  OTF2_Archive_CloseEvtWriter(m.archive, loc.writer);
  loc.writer = nullptr;
  loc.closed = true;
  return true;
}

bool TraceWriter::finish(const Definitions& defs, std::string* error) {
  Impl& m = *impl_;
  if (!m.archive) {
    *error = "no OTF2 archive open";
    return false;
  }
  for (auto& [id, loc] : m.locs)
    if (loc.writer) close_location(id);
  OTF2_Archive_CloseEvtFiles(m.archive);

  // Local definitions: two ClockOffsets (offset 0) per location, so readers interpolate
  // nothing and every location has its traces/<id>.def.
  OTF2_Archive_OpenDefFiles(m.archive);
  for (const auto& l : defs.locations) {
    OTF2_DefWriter* dw = OTF2_Archive_GetDefWriter(m.archive, l.id);
    if (!dw) continue;
    OTF2_DefWriter_WriteClockOffset(dw, defs.clock.offset, 0, 0.0);
    OTF2_DefWriter_WriteClockOffset(dw, defs.clock.offset + defs.clock.length, 0, 0.0);
    OTF2_Archive_CloseDefWriter(m.archive, dw);
  }
  OTF2_Archive_CloseDefFiles(m.archive);

  OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(m.archive);
  if (!g) {
    *error = "cannot write traces.def";
    return false;
  }
  // Intern every string first: definitions may only refer to earlier ones.
  OTF2_StringRef s_machine = m.str(defs.machine), s_machine_cls = m.str("machine");
  OTF2_StringRef s_node = m.str(defs.node), s_node_cls = m.str("node");
  OTF2_StringRef s_process = m.str(defs.process);
  std::vector<OTF2_StringRef> s_loc;
  for (const auto& l : defs.locations) s_loc.push_back(m.str(l.name));
  struct RS { OTF2_StringRef name, canonical, file; };
  std::vector<RS> s_reg;
  for (const auto& r : defs.regions) s_reg.push_back({m.str(r.name), m.str(r.canonical), m.str(r.file)});
  OTF2_StringRef s_empty = m.str("");
  OTF2_StringRef s_threads = m.str("Pthread threads"), s_pthread = m.str("Pthread"), s_compiler = m.str("Compiler"),
                 s_user = m.str("User"), s_measurement = m.str("Measurement");

  {
    OTF2_GlobalDefWriter_WriteClockProperties(g, defs.clock.resolution, defs.clock.offset, defs.clock.length,
                                              defs.clock.realtime_ns);
  }
  for (std::size_t i = 0; i < m.string_list.size(); ++i)
    OTF2_GlobalDefWriter_WriteString(g, static_cast<OTF2_StringRef>(i), m.string_list[i].c_str());
  OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_MEASUREMENT_SYSTEM, s_measurement, OTF2_PARADIGM_CLASS_PROCESS);
  OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_COMPILER, s_compiler, OTF2_PARADIGM_CLASS_PROCESS);
  OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_USER, s_user, OTF2_PARADIGM_CLASS_PROCESS);
  OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_PTHREAD, s_pthread, OTF2_PARADIGM_CLASS_THREAD_CREATE_WAIT);

  OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, s_machine, s_machine_cls, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
  OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 1, s_node, s_node_cls, 0);
  OTF2_GlobalDefWriter_WriteLocationGroup(g, 0, s_process, OTF2_LOCATION_GROUP_TYPE_PROCESS, 1,
                                          OTF2_UNDEFINED_LOCATION_GROUP);
  for (std::size_t i = 0; i < defs.locations.size(); ++i) {
    const auto& l = defs.locations[i];
    auto it = m.locs.find(l.id);
    std::uint64_t events = it == m.locs.end() ? 0 : it->second.events;
    OTF2_GlobalDefWriter_WriteLocation(g, l.id, s_loc[i], OTF2_LOCATION_TYPE_CPU_THREAD, events, 0);
  }
  for (std::size_t i = 0; i < defs.regions.size(); ++i) {
    const auto& r = defs.regions[i];
    OTF2_RegionRole role = OTF2_REGION_ROLE_FUNCTION;
    switch (r.role) {
      case regions::Role::Function: role = OTF2_REGION_ROLE_FUNCTION; break;
      case regions::Role::Wrapper: role = OTF2_REGION_ROLE_WRAPPER; break;
      case regions::Role::ThreadCreate: role = OTF2_REGION_ROLE_THREAD_CREATE; break;
      case regions::Role::ThreadWait: role = OTF2_REGION_ROLE_THREAD_WAIT; break;
      case regions::Role::Artificial: role = OTF2_REGION_ROLE_ARTIFICIAL; break;
      case regions::Role::Code: role = OTF2_REGION_ROLE_CODE; break;
    }
    OTF2_Paradigm paradigm = OTF2_PARADIGM_COMPILER;
    switch (r.paradigm) {
      case regions::Paradigm::Compiler: paradigm = OTF2_PARADIGM_COMPILER; break;
      case regions::Paradigm::User: paradigm = OTF2_PARADIGM_USER; break;
      case regions::Paradigm::Pthread: paradigm = OTF2_PARADIGM_PTHREAD; break;
      case regions::Paradigm::Measurement: paradigm = OTF2_PARADIGM_MEASUREMENT_SYSTEM; break;
    }
    OTF2_GlobalDefWriter_WriteRegion(g, static_cast<OTF2_RegionRef>(i), s_reg[i].name, s_reg[i].canonical, s_empty, role,
                                     paradigm, OTF2_REGION_FLAG_NONE, s_reg[i].file,
                                     r.begin_line < 0 ? 0u : static_cast<std::uint32_t>(r.begin_line),
                                     r.end_line < 0 ? 0u : static_cast<std::uint32_t>(r.end_line));
  }
  if (defs.thread_events) {
    // The thread contingent of ThreadCreate/Begin/End/Wait: all CPU locations of the process.
    std::vector<std::uint64_t> members, ranks;
    for (std::size_t i = 0; i < defs.locations.size(); ++i) {
      members.push_back(defs.locations[i].id);
      ranks.push_back(i);
    }
    OTF2_GlobalDefWriter_WriteGroup(g, 0, s_empty, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_PTHREAD,
                                    OTF2_GROUP_FLAG_NONE, static_cast<std::uint32_t>(members.size()), members.data());
    OTF2_GlobalDefWriter_WriteGroup(g, 1, s_empty, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_PTHREAD,
                                    OTF2_GROUP_FLAG_NONE, static_cast<std::uint32_t>(ranks.size()), ranks.data());
    OTF2_GlobalDefWriter_WriteComm(g, 0, s_threads, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
  }
  OTF2_Archive_CloseGlobalDefWriter(m.archive, g);
  OTF2_ErrorCode rc = OTF2_Archive_Close(m.archive);
  m.archive = nullptr;
  if (rc != OTF2_SUCCESS) {
    *error = std::string("closing the OTF2 archive failed: ") + OTF2_Error_GetDescription(rc);
    return false;
  }
  return true;
}

}  // namespace prof::otf2w
