// SPDX-License-Identifier: BSD-3-Clause
// TraceWriter: raw records → OTF2 events; definitions at the end. OTF2's event chunks come
// from a bounded block pool (one block per open writer: needing a second one makes OTF2 write
// the buffer to disk), and OTF2's own BufferFlush record is disabled (no post-flush callback):
// prof writes BufferFlush records itself, with the real start and end of its own flushes.
// OTF2's error messages come to a callback of the writer, never to stderr: the first error (a
// full disk, mostly) stops the trace and becomes one line of prof's (take_failure).
#include "otf2-writer/trace_writer.hpp"

#include <otf2/otf2.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <unordered_map>

#include "measurement/location.hpp"
#include "measurement/log.hpp"
#include "measurement/memory/budget.hpp"
#include "otf2-writer/event_chunks.hpp"
#include "measurement/mpp.hpp"
#include "measurement/record.hpp"

namespace prof::otf2w {

namespace {
// The attribute on a launching host call's Leave and its GPU work's Enter (RecordType::CorrelationId).
constexpr OTF2_AttributeRef kCorrelationAttribute = 0;

struct BufferMemory {
  void* block = nullptr;   // event buffers: at most one chunk from the pool
  std::uint64_t location = 0;  // an event buffer's
  bool from_pool = false;
  std::vector<void*> heap;  // other buffers (definitions): plain malloc
};
std::uint64_t type_size(OTF2_Type t) {
  switch (t) {
    case OTF2_TYPE_UINT8: case OTF2_TYPE_INT8: return 1;
    case OTF2_TYPE_UINT16: case OTF2_TYPE_INT16: return 2;
    case OTF2_TYPE_UINT32: case OTF2_TYPE_INT32: case OTF2_TYPE_FLOAT: return 4;
    default: return 8;
  }
}

// OTF2's collectives over prof's multi-process layer (one context: all processes; the POSIX
// substrate never asks for local communicators).
Mpp* mpp_of(void* data) { return static_cast<Mpp*>(data); }
OTF2_CallbackCode code(bool ok) { return ok ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_ERROR; }

OTF2_CallbackCode c_get_size(void* d, OTF2_CollectiveContext*, uint32_t* size) {
  *size = mpp_of(d)->size();
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode c_get_rank(void* d, OTF2_CollectiveContext*, uint32_t* rank) {
  *rank = mpp_of(d)->rank();
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode c_create_local(void*, OTF2_CollectiveContext** local, OTF2_CollectiveContext* global, uint32_t,
                                 uint32_t, uint32_t, uint32_t, uint32_t, uint32_t number_of_files) {
  if (number_of_files != 1) return OTF2_CALLBACK_ERROR;
  *local = global;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode c_free_local(void*, OTF2_CollectiveContext*) { return OTF2_CALLBACK_SUCCESS; }
OTF2_CallbackCode c_barrier(void* d, OTF2_CollectiveContext*) { return code(mpp_of(d)->barrier()); }
OTF2_CallbackCode c_bcast(void* d, OTF2_CollectiveContext*, void* data, uint32_t n, OTF2_Type t, uint32_t root) {
  return code(mpp_of(d)->bcast(data, n * type_size(t), root));
}
OTF2_CallbackCode c_gather(void* d, OTF2_CollectiveContext*, const void* in, void* out, uint32_t n, OTF2_Type t, uint32_t root) {
  Mpp* m = mpp_of(d);
  std::vector<std::uint64_t> sizes(m->size(), n * type_size(t));
  return code(m->gatherv(in, n * type_size(t), out, sizes.data(), root));
}
OTF2_CallbackCode c_gatherv(void* d, OTF2_CollectiveContext*, const void* in, uint32_t in_n, void* out,
                            const uint32_t* out_n, OTF2_Type t, uint32_t root) {
  Mpp* m = mpp_of(d);
  std::vector<std::uint64_t> sizes(m->size(), 0);
  if (m->rank() == root)
    for (std::uint32_t r = 0; r < m->size(); ++r) sizes[r] = out_n[r] * type_size(t);
  return code(m->gatherv(in, in_n * type_size(t), out, sizes.data(), root));
}
OTF2_CallbackCode c_scatter(void* d, OTF2_CollectiveContext*, const void* in, void* out, uint32_t n, OTF2_Type t, uint32_t root) {
  Mpp* m = mpp_of(d);
  std::vector<std::uint64_t> sizes(m->size(), n * type_size(t));
  return code(m->scatterv(in, sizes.data(), out, n * type_size(t), root));
}
OTF2_CallbackCode c_scatterv(void* d, OTF2_CollectiveContext*, const void* in, const uint32_t* in_n, void* out,
                             uint32_t out_n, OTF2_Type t, uint32_t root) {
  Mpp* m = mpp_of(d);
  std::vector<std::uint64_t> sizes(m->size(), 0);
  if (m->rank() == root)
    for (std::uint32_t r = 0; r < m->size(); ++r) sizes[r] = in_n[r] * type_size(t);
  return code(m->scatterv(in, sizes.data(), out, out_n * type_size(t), root));
}
void c_release(void*, OTF2_CollectiveContext*, OTF2_CollectiveContext*) {}

const OTF2_CollectiveCallbacks kMppCollectives = {&c_release, &c_get_size,  &c_get_rank, &c_create_local,
                                                  &c_free_local, &c_barrier, &c_bcast,   &c_gather,
                                                  &c_gatherv,  &c_scatter,  &c_scatterv};

OTF2_RegionRole otf2_role(regions::Role r) {
  switch (r) {
    case regions::Role::Function: return OTF2_REGION_ROLE_FUNCTION;
    case regions::Role::Wrapper: return OTF2_REGION_ROLE_WRAPPER;
    case regions::Role::ThreadCreate: return OTF2_REGION_ROLE_THREAD_CREATE;
    case regions::Role::ThreadWait: return OTF2_REGION_ROLE_THREAD_WAIT;
    case regions::Role::Artificial: return OTF2_REGION_ROLE_ARTIFICIAL;
    case regions::Role::Code: return OTF2_REGION_ROLE_CODE;
    case regions::Role::Point2Point: return OTF2_REGION_ROLE_POINT2POINT;
    case regions::Role::Barrier: return OTF2_REGION_ROLE_BARRIER;
    case regions::Role::CollOne2All: return OTF2_REGION_ROLE_COLL_ONE2ALL;
    case regions::Role::CollAll2One: return OTF2_REGION_ROLE_COLL_ALL2ONE;
    case regions::Role::CollAll2All: return OTF2_REGION_ROLE_COLL_ALL2ALL;
    case regions::Role::CollOther: return OTF2_REGION_ROLE_COLL_OTHER;
    case regions::Role::DataTransfer: return OTF2_REGION_ROLE_DATA_TRANSFER;
    case regions::Role::Parallel: return OTF2_REGION_ROLE_PARALLEL;
    case regions::Role::Loop: return OTF2_REGION_ROLE_LOOP;
    case regions::Role::Sections: return OTF2_REGION_ROLE_SECTIONS;
    case regions::Role::Single: return OTF2_REGION_ROLE_SINGLE;
    case regions::Role::Master: return OTF2_REGION_ROLE_MASTER;
    case regions::Role::Critical: return OTF2_REGION_ROLE_CRITICAL;
    case regions::Role::Atomic: return OTF2_REGION_ROLE_ATOMIC;
    case regions::Role::ImplicitBarrier: return OTF2_REGION_ROLE_IMPLICIT_BARRIER;
    case regions::Role::Task: return OTF2_REGION_ROLE_TASK;
    case regions::Role::TaskCreate: return OTF2_REGION_ROLE_TASK_CREATE;
    case regions::Role::TaskWait: return OTF2_REGION_ROLE_TASK_WAIT;
    case regions::Role::Taskgroup: return OTF2_REGION_ROLE_TASK_WAIT;  // OTF2 3.0 has no taskgroup role
    case regions::Role::Ordered: return OTF2_REGION_ROLE_ORDERED;
    case regions::Role::Flush: return OTF2_REGION_ROLE_FLUSH;
  }
  return OTF2_REGION_ROLE_FUNCTION;
}

OTF2_Paradigm lock_paradigm(std::uint16_t model) {
  return model == static_cast<std::uint16_t>(LockModel::OpenMP) ? OTF2_PARADIGM_OPENMP : OTF2_PARADIGM_PTHREAD;
}

OTF2_Paradigm otf2_paradigm(regions::Paradigm p) {
  switch (p) {
    case regions::Paradigm::Compiler: return OTF2_PARADIGM_COMPILER;
    case regions::Paradigm::User: return OTF2_PARADIGM_USER;
    case regions::Paradigm::Pthread: return OTF2_PARADIGM_PTHREAD;
    case regions::Paradigm::Measurement: return OTF2_PARADIGM_MEASUREMENT_SYSTEM;
    case regions::Paradigm::Mpi: return OTF2_PARADIGM_MPI;
    case regions::Paradigm::Cuda: return OTF2_PARADIGM_CUDA;
    case regions::Paradigm::Sampling: return OTF2_PARADIGM_SAMPLING;
    case regions::Paradigm::Python: return OTF2_PARADIGM_USER;  // OTF2 3.0 has no Python paradigm
    case regions::Paradigm::OpenMP: return OTF2_PARADIGM_OPENMP;
  }
  return OTF2_PARADIGM_COMPILER;
}

}  // namespace

struct TraceWriter::Impl {
  OTF2_Archive* archive = nullptr;
  ChunkPool* blocks = nullptr;
  struct Loc {
    OTF2_EvtWriter* writer = nullptr;
    std::uint64_t events = 0;
    Timestamp last = 0;
    bool closed = false;
    std::vector<std::uint32_t> open;  // regions entered and not left, innermost last
    std::uint32_t correlation = 0;    // a CorrelationId for the next Enter/Leave
  };
  std::uint64_t over_now = 0;  // OTF2 chunks from malloc in use now
  OTF2_AttributeList* attributes = nullptr;  // reused for every event with a correlation id
  std::unordered_map<std::uint64_t, Loc> locs;
  std::unordered_map<std::uint64_t, BufferMemory*> event_memory;  // location → its event buffer's memory
  std::unordered_map<std::string, OTF2_StringRef> strings;
  std::vector<std::string> string_list;
  OTF2_StringRef program = 0;
  std::vector<OTF2_StringRef> args;
  std::vector<MetricMember> metrics;
  unsigned metric_class_size[2] = {0, 0};
  OTF2_MetricRef metric_class_ref[2] = {0, 0};  // dense ids: class 0 may be empty (per-process events only)
  WriterStats stats;
  std::string error;

  // Writing failed (OTF2 reported an error): the trace is given up (abandon) and removed at the end.
  std::string dir;        // as given to open(): the archive is dir/traces.otf2, dir/traces.def, dir/traces/
  Mpp* mpp = nullptr;
  bool callback_set = false;
  bool failed = false;
  bool abandoned = false;      // this process's event files are closed and removed
  bool failure_taken = false;  // take_failure() gave the line
  OTF2_ErrorCode failure_code = OTF2_SUCCESS;
  std::string failure_detail;  // OTF2's message of the first error
  std::function<void(const std::string&)> merge_step;  // TraceWriter::on_merge_step
  bool warned = false;         // an OTF2 warning was shown (one line per writer)

  static OTF2_ErrorCode on_error(void* data, const char*, uint64_t, const char*, OTF2_ErrorCode code, const char* fmt,
                                 va_list va) {
    auto* self = static_cast<Impl*>(data);
    char text[512];
    std::vsnprintf(text, sizeof text, fmt ? fmt : "", va);
    const char* posix = "POSIX: ";  // OTF2's prefix of a failed system call's file name
    if (std::strncmp(text, posix, std::strlen(posix)) == 0) std::memmove(text, text + std::strlen(posix), std::strlen(text) - std::strlen(posix) + 1);
    const std::string what = std::string(OTF2_Error_GetDescription(code)) + (text[0] ? std::string(": ") + text : "");
    if (code == OTF2_ABORT) {
      log::error("OTF2: %s", what.c_str());  // OTF2 aborts the process next
    } else if (code == OTF2_WARNING || code == OTF2_DEPRECATED) {
      if (!self->warned) log::warning("OTF2: %s", what.c_str());
      self->warned = true;
    } else if (!self->failed) {
      // The first error names the cause (later ones are its consequences: "Buffer flush failed").
      self->failed = true;
      self->failure_code = code;
      self->failure_detail = what;
    }
    return code;
  }
  void set_callback() {
    if (!callback_set) OTF2_Error_RegisterCallback(&Impl::on_error, this);
    callback_set = true;
  }
  void reset_callback() {
    if (callback_set) OTF2_Error_RegisterCallback(nullptr, nullptr);  // OTF2's own printing again
    callback_set = false;
  }
  std::string file_of(std::uint64_t location, const char* ext) const {
    return dir + "/traces/" + std::to_string(location) + ext;
  }
  // After the first error: no more writes. This process's event files are closed (OTF2's last
  // flush fails again, quietly) and removed, which gives their space back at once.
  void abandon() {
    if (abandoned || !archive) return;
    abandoned = true;
    for (auto& [id, loc] : locs) {
      if (loc.writer) OTF2_Archive_CloseEvtWriter(archive, loc.writer);
      loc.writer = nullptr;
      loc.closed = true;
      ::unlink(file_of(id, ".evt").c_str());
    }
  }
  // finish() after a failure anywhere: every process removes its files; rank 0 the anchor, the
  // global definitions and, once the others are done, the traces/ folder.
  void remove_archive(const Definitions& defs) {
    for (const auto& [id, loc] : locs) ::unlink(file_of(id, ".evt").c_str());
    for (std::uint64_t id : defs.local_locations) {
      ::unlink(file_of(id, ".evt").c_str());
      ::unlink(file_of(id, ".def").c_str());
    }
    if (defs.is_root) {
      ::unlink((dir + "/traces.otf2").c_str());
      ::unlink((dir + "/traces.def").c_str());
    }
    if (mpp) mpp->barrier();
    if (defs.is_root) ::rmdir((dir + "/traces").c_str());
  }

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

  bool write_global(const Definitions& defs);
  void write_local(const LocalDefs& l, const ClockInfo& clock);
  /// After a written trace (finish, collective): its event files in the chunk size that readers
  /// of all its locations can hold, when the one chosen at open was for fewer locations.
  void recut_events(const Definitions& defs);
  /// A definitions-only archive in the folder `tmp` (write_merged, write_salvaged): empty event
  /// files for `empty`, the local definitions of `locals`, the global ones. The open archive, if
  /// any, stays as it was.
  bool write_scratch(const std::string& tmp, const char* description, const Definitions& defs,
                     const std::vector<LocalDefs>& locals, const std::vector<std::uint64_t>& empty);

  static OTF2_FlushType pre_flush(void* data, OTF2_FileType type, OTF2_LocationRef, void*, bool final) {
    auto* self = static_cast<Impl*>(data);
    if (type == OTF2_FILETYPE_EVENTS) ++self->stats.otf2_flushes;
    self->closing = final;
    return OTF2_FLUSH;
  }

  static void* allocate(void* data, OTF2_FileType type, OTF2_LocationRef location, void** per_buffer, std::uint64_t size) {
    auto* self = static_cast<Impl*>(data);
    auto* mem = static_cast<BufferMemory*>(*per_buffer);
    if (!mem) {
      *per_buffer = mem = new BufferMemory;
      mem->location = location;
      if (type == OTF2_FILETYPE_EVENTS) self->event_memory[location] = mem;
    }
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
      if (p) {
        ++self->stats.otf2_over_budget;
        if (++self->over_now > self->stats.otf2_over_budget_peak) self->stats.otf2_over_budget_peak = self->over_now;
      }
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
      if (mem->from_pool) {
        self->blocks->release(mem->block, final || self->closing);
      } else {
        std::free(mem->block);
        --self->over_now;
      }
      mem->block = nullptr;
    }
    for (void* p : mem->heap) std::free(p);
    mem->heap.clear();
    if (final) {
      auto it = self->event_memory.find(mem->location);
      if (it != self->event_memory.end() && it->second == mem) self->event_memory.erase(it);
      delete mem;
      *per_buffer = nullptr;
    }
  }
};

TraceWriter::TraceWriter() : impl_(new Impl) {}

TraceWriter::~TraceWriter() {
  if (impl_->archive) OTF2_Archive_Close(impl_->archive);
  if (impl_->attributes) OTF2_AttributeList_Delete(impl_->attributes);
  impl_->reset_callback();
}

bool TraceWriter::is_open() const { return impl_->archive != nullptr; }
const std::string& TraceWriter::directory() const { return impl_->dir; }
const WriterStats& TraceWriter::stats() const { return impl_->stats; }
const std::string& TraceWriter::last_error() const { return impl_->error; }
bool TraceWriter::failed() const { return impl_->failed; }

std::string TraceWriter::take_failure(const char* kept) {
  Impl& m = *impl_;
  if (!m.failed || m.failure_taken) return "";
  m.failure_taken = true;
  const bool space = m.failure_code == OTF2_ERROR_ENOSPC || m.failure_code == OTF2_ERROR_EDQUOT ||
                     m.failure_code == OTF2_ERROR_EFBIG;
  std::string line = "cannot write the trace in '" + m.dir + "' (" + m.failure_detail +
                     "); tracing stopped and its files are removed";
  if (kept) line += std::string(", ") + kept;
  line += space ? "; free space there, set PROF_EXPERIMENT_DIRECTORY to a file system with more room, or record fewer "
                  "events (PROF_FILTERING_FILE)"
                : "; check that file system, or set PROF_EXPERIMENT_DIRECTORY to another one";
  return line;
}

void TraceWriter::drop_events(const EventBuffer& buffer) {
  std::uint64_t n = 0;
  buffer.for_each([&](const Record&, const Payload*) { ++n; });
  impl_->stats.dropped_events += n;
}

bool TraceWriter::open(const std::string& dir, ChunkPool* blocks, std::string* error, Mpp* mpp, std::uint64_t event_chunk,
                       bool join) {
  Impl& m = *impl_;
  m.blocks = blocks;
  m.dir = dir;
  m.mpp = mpp;
  m.set_callback();
  std::uint64_t chunk = event_chunk ? event_chunk
                       : blocks && blocks->chunk_bytes() >= OTF2_CHUNK_SIZE_MIN ? blocks->chunk_bytes() : OTF2_CHUNK_SIZE_MIN;
  m.stats.otf2_block_bytes = chunk;
  m.archive = OTF2_Archive_Open(dir.c_str(), "traces", OTF2_FILEMODE_WRITE, chunk, OTF2_CHUNK_SIZE_MIN,
                                OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  // OTF2's message of what failed (it names the file), for the line below.
  const auto detail = [&] { return m.failed ? " (" + m.failure_detail + ")" : std::string(); };
  if (!m.archive) {
    *error = "cannot create the OTF2 archive in '" + dir + "'" + detail() + "; check that the directory is writable and the disk not full";
    m.reset_callback();
    return false;
  }
  static const OTF2_FlushCallbacks flush_cbs = {&Impl::pre_flush, nullptr};
  static const OTF2_MemoryCallbacks mem_cbs = {&Impl::allocate, &Impl::free_all};
  OTF2_Archive_SetFlushCallbacks(m.archive, &flush_cbs, &m);
  OTF2_Archive_SetMemoryCallbacks(m.archive, &mem_cbs, &m);
  // OTF2 creates the archive's directories here (rank 0, with an Mpp); every later call
  // "succeeds" without them.
  const OTF2_ErrorCode set = mpp ? OTF2_Archive_SetCollectiveCallbacks(m.archive, &kMppCollectives, mpp, nullptr, nullptr)
                                 : OTF2_Archive_SetSerialCollectiveCallbacks(m.archive);
  if (set != OTF2_SUCCESS && !(join && !mpp && set == OTF2_ERROR_EEXIST)) {
    *error = "cannot create the OTF2 archive in '" + dir + "'" + detail() + "; check that the directory is writable and the disk not full";
    OTF2_Archive_Close(m.archive);
    m.archive = nullptr;
    m.reset_callback();
    return false;
  }
  OTF2_Archive_SetCreator(m.archive, "prof " PROF_VERSION);
  OTF2_Archive_SetDescription(m.archive, "prof measurement");
  bool ok = OTF2_Archive_OpenEvtFiles(m.archive) == OTF2_SUCCESS;
  if (!ok) *error = "cannot open the OTF2 event files in '" + dir + "/traces'" + detail() + "; check permissions and free space";
  // All processes keep the archive or none does: one without it would leave the others waiting in
  // the archive's collective close at the end. (The step above is the archive's only local one
  // that can fail after its collective set-up, whose result OTF2 shares.)
  if (mpp) {
    const std::uint32_t failed = first_failed(*mpp, ok);
    if (ok && failed != kNoRank) {
      *error = "rank " + std::to_string(failed) + " could not open its OTF2 event files (see its message); no rank writes a trace";
      ok = false;
    }
  }
  if (!ok) {
    OTF2_Archive_Close(m.archive);
    m.archive = nullptr;
    m.reset_callback();
  }
  m.failed = false;  // what open() reported is its own error, not a failed trace
  return ok;
}

void TraceWriter::set_program(const std::string& name, const std::vector<std::string>& args) {
  impl_->program = impl_->str(name);
  impl_->args.clear();
  for (const auto& a : args) impl_->args.push_back(impl_->str(a));
}

namespace {
void remove_merge_dir(const std::string& path);
}  // namespace

SalvageState TraceWriter::salvage_state() const {
  const Impl& m = *impl_;
  SalvageState st;
  if (m.program < m.string_list.size()) st.program = m.string_list[m.program];
  for (OTF2_StringRef a : m.args)
    if (a < m.string_list.size()) st.args.push_back(m.string_list[a]);
  st.metrics = m.metrics;
  st.metric_threads = m.metric_class_size[0];
  st.event_chunk = m.stats.otf2_block_bytes;
  return st;
}

bool TraceWriter::write_salvaged(const std::string& dir, const SalvageState& state, const Definitions& global,
                                 const std::vector<LocalDefs>& locals, const std::vector<std::uint64_t>& empty,
                                 std::string* error) {
  Impl& m = *impl_;
  if (m.archive) {
    *error = "the writer is open";
    return false;
  }
  // The same string and metric ids as the writer that wrote the events (set_program first).
  set_program(state.program, state.args);
  set_metrics(state.metrics, state.metric_threads);
  m.stats.otf2_block_bytes = state.event_chunk;
  m.set_callback();
  const std::string tmp = dir + "/prof-parts/salvage-" + std::to_string(::getpid());
  remove_merge_dir(tmp);
  ::mkdir((dir + "/prof-parts").c_str(), 0755);
  bool ok = m.write_scratch(tmp, "prof measurement (salvaged from a run that was killed)", global, locals, empty);
  // The local definitions into traces/, then traces.def, then the anchor: a reader finds the
  // anchor only once all it names is there.
  const std::string from = tmp + "/traces/", to = dir + "/traces/";
  if (ok)
    if (DIR* d = ::opendir(from.c_str())) {
      while (const struct dirent* e = ::readdir(d))
        if (e->d_name[0] != '.' && ::rename((from + e->d_name).c_str(), (to + e->d_name).c_str()) != 0) ok = false;
      ::closedir(d);
    }
  ok = ok && ::rename((tmp + "/traces.def").c_str(), (dir + "/traces.def").c_str()) == 0 &&
       ::rename((tmp + "/traces.otf2").c_str(), (dir + "/traces.otf2").c_str()) == 0;
  const std::string why = m.failed ? m.failure_detail : std::strerror(errno);
  remove_merge_dir(tmp);
  m.reset_callback();
  if (!ok) *error = "cannot write the trace's definitions in '" + dir + "' (" + why + ")";
  return ok;
}

bool TraceWriter::count_events(const std::string& anchor, const std::vector<std::uint64_t>& locations,
                               std::vector<std::uint64_t>* counts, std::string* error) {
  // OTF2's messages of the cut chunk are expected here: not printed.
  OTF2_Error_RegisterCallback([](void*, const char*, uint64_t, const char*, OTF2_ErrorCode code, const char*, va_list) { return code; },
                              nullptr);
  counts->assign(locations.size(), 0);
  OTF2_Reader* r = OTF2_Reader_Open(anchor.c_str());
  if (!r) {
    *error = "cannot open '" + anchor + "' to count its events";
    OTF2_Error_RegisterCallback(nullptr, nullptr);
    return false;
  }
  OTF2_Reader_SetSerialCollectiveCallbacks(r);
  for (std::size_t i = 0; i < locations.size(); ++i) {
    OTF2_Reader_SelectLocation(r, locations[i]);
  }
  OTF2_Reader_OpenEvtFiles(r);
  for (std::size_t i = 0; i < locations.size(); ++i) {
    OTF2_EvtReader* er = OTF2_Reader_GetEvtReader(r, locations[i]);
    if (!er) continue;
    // The last event position a seek reaches (OTF2 finds positions through its chunk headers,
    // without decoding the events before), then the events from there read one by one: a trace
    // of 40 million events is counted in a second, not in a minute.
    std::uint64_t lo = 0, hi = 1;
    while (OTF2_EvtReader_Seek(er, hi) == OTF2_SUCCESS) {
      lo = hi;
      if (hi > (std::uint64_t{1} << 62)) break;
      hi *= 2;
    }
    while (hi - lo > 1) {  // lo reachable (or 0), hi not
      const std::uint64_t mid = lo + (hi - lo) / 2;
      if (OTF2_EvtReader_Seek(er, mid) == OTF2_SUCCESS) lo = mid;
      else hi = mid;
    }
    if (lo > 1 && OTF2_EvtReader_Seek(er, lo) != OTF2_SUCCESS) lo = 0;
    // OTF2 counts the records read before an error too (OTF2_EvtReader_ReadEvents).
    std::uint64_t n = lo > 1 ? lo - 1 : 0;
    if (lo <= 1) {  // from the start
      OTF2_Reader_CloseEvtReader(r, er);
      er = OTF2_Reader_GetEvtReader(r, locations[i]);
      if (!er) continue;
    }
    constexpr uint64_t kBatch = 1 << 16;
    for (;;) {
      uint64_t got = 0;
      const OTF2_ErrorCode rc = OTF2_Reader_ReadLocalEvents(r, er, kBatch, &got);
      n += got;
      if (rc != OTF2_SUCCESS || got < kBatch) break;
    }
    (*counts)[i] = n;
    OTF2_Reader_CloseEvtReader(r, er);
  }
  OTF2_Reader_CloseEvtFiles(r);
  OTF2_Reader_Close(r);
  OTF2_Error_RegisterCallback(nullptr, nullptr);
  return true;
}

void TraceWriter::set_metrics(const std::vector<MetricMember>& members, unsigned thread_count) {
  impl_->metrics = members;
  impl_->metric_class_size[0] = thread_count;
  impl_->metric_class_size[1] = static_cast<unsigned>(members.size());
  impl_->metric_class_ref[0] = 0;
  impl_->metric_class_ref[1] = thread_count ? 1 : 0;
}

std::uint64_t TraceWriter::event_count(std::uint64_t location) const {
  auto it = impl_->locs.find(location);
  return it == impl_->locs.end() ? 0 : it->second.events;
}

bool TraceWriter::resume_state(std::uint64_t location, WriterResume* out) const {
  const Impl& m = *impl_;
  *out = WriterResume{};
  auto it = m.locs.find(location);
  if (it == m.locs.end()) return true;  // nothing written yet
  const Impl::Loc& loc = it->second;
  if (loc.closed) return false;
  out->last = loc.last;
  out->correlation = loc.correlation;
  out->open = loc.open;
  out->events = loc.events;
  if (!loc.writer) return true;
  std::uint64_t counted = 0;
  if (OTF2_EvtWriter_GetNumberOfEvents(loc.writer, &counted) == OTF2_SUCCESS) out->events = counted;
  // The chunk OTF2 fills now (one per writer, from allocate): from its header, which names its
  // first event, to the writer's last event. What follows that is an earlier chunk's leftover.
  auto mem = m.event_memory.find(location);
  if (mem == m.event_memory.end() || !mem->second->block) return true;  // the last chunk went to disk
  const auto* c = static_cast<const unsigned char*>(mem->second->block);
  const std::uint64_t len = m.stats.otf2_block_bytes;
  std::uint64_t first = 0;
  if (len <= chunks::kHeaderBytes || c[0] != chunks::kHeader || c[1] != chunks::kEndianness) return true;
  std::memcpy(&first, c + 2, 8);
  if (first == 0 || first > out->events + 1) return true;
  std::uint64_t pos = chunks::kHeaderBytes;
  for (std::uint64_t want = out->events + 1 - first; want > 0;) {
    const std::uint64_t n = chunks::record_bytes(c, pos, len);
    if (!n) return true;  // not as expected: the salvage names the gap instead
    if (c[pos] != chunks::kTimestamp && c[pos] != chunks::kAttributeList) --want;
    pos += n;
  }
  out->first = first;
  out->pending.assign(c, c + pos);
  out->pending.push_back(chunks::kEndOfChunk);
  return true;
}

void TraceWriter::resume(std::uint64_t location, const WriterResume& state) {
  Impl::Loc& loc = impl_->locs[location];
  loc.last = state.last;
  loc.correlation = state.correlation;
  loc.open = state.open;
}

bool TraceWriter::writing(std::uint64_t location) const {
  auto it = impl_->locs.find(location);
  return it != impl_->locs.end() && it->second.writer && !it->second.closed;
}

bool TraceWriter::write_events(std::uint64_t location, const EventBuffer& buffer, bool close) {
  Impl& m = *impl_;
  if (!m.archive) return false;
  if (m.failed) {
    drop_events(buffer);
    m.error = "the trace failed earlier: " + m.failure_detail;
    return false;
  }
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
  OTF2_Type metric_types[256];
  OTF2_MetricValue metric_values[256];
  for (OTF2_Type& type : metric_types) type = OTF2_TYPE_UINT64;
  // The loop's state in locals (registers across the OTF2 calls, which the compiler cannot see into).
  Timestamp last = loc.last;
  std::uint32_t correlation = loc.correlation;
  // The regions entered and not left: loc.open, then (innermost last) up to kTop more in `top`,
  // which the common case below pushes and pops without touching the vector.
  std::vector<std::uint32_t>& open = loc.open;
  constexpr std::uint32_t kTop = 64;
  std::uint32_t top[kTop];
  std::uint32_t k = 0;
  const auto top_to_open = [&] {
    for (std::uint32_t i = 0; i < k; ++i) {
      const std::uint32_t region = top[i];  // a copy: push_back(top[i]) would let top's address escape
      open.push_back(region);
    }
    k = 0;
  };
  buffer.for_each([&](const Record& r, const Payload* p) {
    if (rc != OTF2_SUCCESS) return;
    const Timestamp t = r.time < last ? last : r.time;
    last = t;
    // The bulk of a trace: an Enter, or the Leave of the innermost open region, without payload
    // or correlation id.
    if (PROF_LIKELY(r.slots == 0 && !correlation)) {
      if (r.type == RecordType::Enter) {
        if (PROF_UNLIKELY(k == kTop)) top_to_open();
        top[k++] = r.ref;
        rc = OTF2_EvtWriter_Enter(w, nullptr, t, r.ref);
        ++n;
        return;
      }
      if (r.type == RecordType::Leave && k && top[k - 1] == r.ref) {
        --k;
        rc = OTF2_EvtWriter_Leave(w, nullptr, t, r.ref);
        ++n;
        return;
      }
    }
    top_to_open();  // the rest works on the vector
    // Nesting: events lost for lack of memory (an Enter, or the Leaves of inner regions) must not
    // leave the trace with a Leave that has no Enter, or with regions that never end.
    if (r.type == RecordType::Enter) {
      open.push_back(r.ref);
    } else if (r.type == RecordType::Leave && (open.empty() || open.back() != r.ref)) {
      // Not the innermost region (rare: only after lost events): searched from the inside out.
      if (std::find(open.rbegin(), open.rend(), r.ref) == open.rend()) {
        ++m.stats.dropped_leaves;  // its Enter was lost: the Leave (and its metric values) too
        correlation = 0;
        return;
      }
      while (open.back() != r.ref) {
        rc = OTF2_EvtWriter_Leave(w, nullptr, t, open.back());
        if (rc != OTF2_SUCCESS) return;
        open.pop_back();
        ++m.stats.closed_regions;
        ++n;
      }
      open.pop_back();
    } else if (r.type == RecordType::Leave) {
      open.pop_back();
    } else if (r.type == RecordType::ThreadEnd || r.type == RecordType::ProgramEnd) {
      // Frames are closed before these: what is still open lost its Leave.
      for (; !open.empty(); open.pop_back()) {
        rc = OTF2_EvtWriter_Leave(w, nullptr, t, open.back());
        if (rc != OTF2_SUCCESS) return;
        ++m.stats.closed_regions;
        ++n;
      }
    }
    if (r.slots && (r.type == RecordType::Enter || r.type == RecordType::Leave || r.type == RecordType::MetricValues) &&
        r.aux < 2) {
      // The metric values read with this Enter/Leave (or at a sample): a Metric event at the same
      // time, first.
      const unsigned count = std::min<unsigned>(m.metric_class_size[r.aux], 2u * r.slots);
      const auto* v = reinterpret_cast<const std::uint64_t*>(p);
      for (unsigned i = 0; i < count; ++i) metric_values[i].unsigned_int = v[i];
      if (count) {
        rc = OTF2_EvtWriter_Metric(w, nullptr, t, m.metric_class_ref[r.aux], static_cast<std::uint8_t>(count), metric_types, metric_values);
        if (rc != OTF2_SUCCESS) return;
        ++n;
      }
    }
    OTF2_AttributeList* attributes = nullptr;
    if (correlation && (r.type == RecordType::Enter || r.type == RecordType::Leave)) {
      if (!m.attributes) m.attributes = OTF2_AttributeList_New();
      if (m.attributes && OTF2_AttributeList_AddUint32(m.attributes, kCorrelationAttribute, correlation) == OTF2_SUCCESS)
        attributes = m.attributes;  // OTF2 empties the list when it writes the event
      correlation = 0;
    }
    switch (r.type) {
      case RecordType::Enter: rc = OTF2_EvtWriter_Enter(w, attributes, t, r.ref); break;
      case RecordType::Leave: rc = OTF2_EvtWriter_Leave(w, attributes, t, r.ref); break;
      case RecordType::CorrelationId: correlation = r.ref; return;
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
        rc = OTF2_EvtWriter_ThreadAcquireLock(w, nullptr, t, lock_paradigm(r.aux), r.ref, static_cast<std::uint32_t>(p[0].a));
        break;
      case RecordType::ReleaseLock:
        rc = OTF2_EvtWriter_ThreadReleaseLock(w, nullptr, t, lock_paradigm(r.aux), r.ref, static_cast<std::uint32_t>(p[0].a));
        break;
      case RecordType::ThreadFork:
        rc = OTF2_EvtWriter_ThreadFork(w, nullptr, t, OTF2_PARADIGM_OPENMP, static_cast<std::uint32_t>(p[0].a));
        break;
      case RecordType::ThreadJoin: rc = OTF2_EvtWriter_ThreadJoin(w, nullptr, t, OTF2_PARADIGM_OPENMP); break;
      case RecordType::ThreadTeamBegin: rc = OTF2_EvtWriter_ThreadTeamBegin(w, nullptr, t, r.ref); break;
      case RecordType::ThreadTeamEnd: rc = OTF2_EvtWriter_ThreadTeamEnd(w, nullptr, t, r.ref); break;
      case RecordType::ProgramBegin:
        rc = OTF2_EvtWriter_ProgramBegin(w, nullptr, t, m.program, static_cast<std::uint32_t>(m.args.size()),
                                         m.args.empty() ? nullptr : m.args.data());
        break;
      case RecordType::ProgramEnd:
        rc = OTF2_EvtWriter_ProgramEnd(w, nullptr, t, static_cast<std::int64_t>(p[0].a));
        break;
      case RecordType::MpiSend:
        rc = OTF2_EvtWriter_MpiSend(w, nullptr, t, static_cast<std::uint32_t>(p[0].a), r.ref,
                                    static_cast<std::uint32_t>(p[0].a >> 32), p[0].b);
        break;
      case RecordType::MpiIsend:
        rc = OTF2_EvtWriter_MpiIsend(w, nullptr, t, static_cast<std::uint32_t>(p[0].a), r.ref,
                                     static_cast<std::uint32_t>(p[0].a >> 32), p[0].b, p[1].a);
        break;
      case RecordType::MpiIsendComplete: rc = OTF2_EvtWriter_MpiIsendComplete(w, nullptr, t, p[0].a); break;
      case RecordType::MpiIrecvRequest: rc = OTF2_EvtWriter_MpiIrecvRequest(w, nullptr, t, p[0].a); break;
      case RecordType::MpiRecv:
        rc = OTF2_EvtWriter_MpiRecv(w, nullptr, t, static_cast<std::uint32_t>(p[0].a), r.ref,
                                    static_cast<std::uint32_t>(p[0].a >> 32), p[0].b);
        break;
      case RecordType::MpiIrecv:
        rc = OTF2_EvtWriter_MpiIrecv(w, nullptr, t, static_cast<std::uint32_t>(p[0].a), r.ref,
                                     static_cast<std::uint32_t>(p[0].a >> 32), p[0].b, p[1].a);
        break;
      case RecordType::MpiRequestTest: rc = OTF2_EvtWriter_MpiRequestTest(w, nullptr, t, p[0].a); break;
      case RecordType::MpiRequestCancelled: rc = OTF2_EvtWriter_MpiRequestCancelled(w, nullptr, t, p[0].a); break;
      case RecordType::MpiCollectiveBegin: rc = OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, t); break;
      case RecordType::MpiCollectiveEnd:
        rc = OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, t, static_cast<OTF2_CollectiveOp>(r.aux), r.ref,
                                             static_cast<std::uint32_t>(p[0].a), p[0].b, p[1].a);
        break;
      case RecordType::NbCollRequest: rc = OTF2_EvtWriter_NonBlockingCollectiveRequest(w, nullptr, t, p[0].a); break;
      case RecordType::NbCollComplete:
        rc = OTF2_EvtWriter_NonBlockingCollectiveComplete(w, nullptr, t, static_cast<OTF2_CollectiveOp>(r.aux), r.ref,
                                                          static_cast<std::uint32_t>(p[0].a), p[0].b, p[1].a, p[1].b);
        break;
      case RecordType::RmaPut:
        rc = OTF2_EvtWriter_RmaPut(w, nullptr, t, r.ref, static_cast<std::uint32_t>(p[0].a), p[0].b, p[1].a);
        break;
      case RecordType::RmaGet:
        rc = OTF2_EvtWriter_RmaGet(w, nullptr, t, r.ref, static_cast<std::uint32_t>(p[0].a), p[0].b, p[1].a);
        break;
      case RecordType::RmaOpCompleteBlocking: rc = OTF2_EvtWriter_RmaOpCompleteBlocking(w, nullptr, t, r.ref, p[0].a); break;
      case RecordType::CallingContextSample:
        rc = OTF2_EvtWriter_CallingContextSample(w, nullptr, t, r.ref, static_cast<std::uint32_t>(p[0].a), r.aux);
        break;
      case RecordType::MetricValues: return;  // its Metric event is written above
      default: return;  // unknown records are skipped, never guessed
    }
    ++n;
  });
  top_to_open();
  loc.last = last;
  loc.correlation = correlation;
  loc.events += n;
  m.stats.events += n;
  if (rc != OTF2_SUCCESS || m.failed) {
    m.error = std::string("OTF2 error while writing events: ") + OTF2_Error_GetDescription(rc != OTF2_SUCCESS ? rc : m.failure_code);
    if (!m.failed) {  // an error OTF2 did not report through its callback
      m.failed = true;
      m.failure_code = rc;
      m.failure_detail = OTF2_Error_GetDescription(rc);
    }
    m.abandon();
    return false;
  }
  return close ? close_location(location) : true;
}

bool TraceWriter::close_location(std::uint64_t location) {
  Impl& m = *impl_;
  auto it = m.locs.find(location);
  if (it == m.locs.end() || !it->second.writer) return false;
  Impl::Loc& loc = it->second;
  // Regions still open (their Leaves were lost) end at the location's last time.
  for (; !loc.open.empty(); loc.open.pop_back()) {
    if (OTF2_EvtWriter_Leave(loc.writer, nullptr, loc.last, loc.open.back()) != OTF2_SUCCESS) break;
    ++m.stats.closed_regions;
    ++m.stats.events;
  }
  std::uint64_t counted = 0;
  OTF2_EvtWriter_GetNumberOfEvents(loc.writer, &counted);
  loc.events = counted;
  OTF2_Archive_CloseEvtWriter(m.archive, loc.writer);
  loc.writer = nullptr;
  loc.closed = true;
  if (m.failed) {
    m.abandon();
    return false;
  }
  return true;
}

// traces.def: the unified definitions of all processes (rank 0). Definitions refer only to
// earlier ones: strings, paradigms, the system tree, location groups, locations, regions,
// groups, communicators (parents first: unification keeps that order).
bool TraceWriter::Impl::write_global(const Definitions& defs) {
  OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(archive);
  if (!g) return false;
  const bool mpi = defs.mpp_paradigm != nullptr;
  // Intern every string first.
  const OTF2_StringRef s_machine = str(defs.machine), s_machine_cls = str("machine"), s_node_cls = str("node");
  std::map<std::string, std::uint32_t> node_of_host;
  for (const auto& p : defs.processes) node_of_host.emplace(p.host, 0);
  std::vector<OTF2_StringRef> s_host;
  std::uint32_t next_node = 1;
  for (auto& [host, id] : node_of_host) {
    id = next_node++;
    s_host.push_back(str(host));
  }
  std::vector<OTF2_StringRef> s_group;
  std::vector<std::vector<OTF2_StringRef>> s_loc(defs.processes.size());
  for (std::size_t r = 0; r < defs.processes.size(); ++r) {
    s_group.push_back(str(mpi ? std::string(defs.mpp_paradigm) + " Rank " + std::to_string(r) : std::string("Process")));
    for (const auto& l : defs.processes[r].locations) s_loc[r].push_back(str(l.name));
  }
  struct RS { OTF2_StringRef name, canonical, file, description; };
  std::vector<RS> s_reg;
  for (const auto& r : defs.regions)
    s_reg.push_back({str(r.name), str(r.canonical), str(r.file), str(regions::throttled_description(r.throttled_visits, r.throttled_mean_ns))});
  std::vector<OTF2_StringRef> s_comm;
  for (const auto& c : defs.comms) s_comm.push_back(str(c.name));
  // Accelerator location groups (GPU contexts): per process, one per distinct group name, with
  // ids after the processes' (OTF2: a process group holds no accelerator streams).
  std::vector<std::map<std::string, OTF2_LocationGroupRef>> accel(defs.processes.size());
  std::vector<std::pair<std::size_t, std::string>> accel_order;  // (process, group name) by id
  for (std::size_t r = 0; r < defs.processes.size(); ++r)
    for (const auto& l : defs.processes[r].locations)
      if (!l.group.empty() && accel[r].emplace(l.group, static_cast<OTF2_LocationGroupRef>(defs.processes.size() + accel_order.size())).second)
        accel_order.emplace_back(r, l.group);
  std::vector<OTF2_StringRef> s_accel;
  for (const auto& a : accel_order) s_accel.push_back(str(a.second));
  bool cuda = !accel_order.empty();
  for (const auto& r : defs.regions) cuda = cuda || r.paradigm == regions::Paradigm::Cuda;
  for (const auto& c : defs.comms) cuda = cuda || c.kind == comms::Kind::Cuda;
  for (const auto& r : defs.regions) cuda = cuda || r.paradigm == regions::Paradigm::Cuda;
  bool sampling = !defs.generators.empty();
  for (const auto& r : defs.regions) sampling = sampling || r.paradigm == regions::Paradigm::Sampling;
  std::vector<OTF2_StringRef> s_gen;
  for (const auto& g : defs.generators) s_gen.push_back(str(g.name));
  struct MS { OTF2_StringRef name, description, unit; };
  std::vector<MS> s_metric;
  for (const auto& mm : metrics) s_metric.push_back({str(mm.name), str(mm.description), str(mm.unit)});
  const OTF2_StringRef s_empty = str(""), s_pthread = str("Pthread"), s_compiler = str("Compiler"), s_user = str("User"),
                       s_measurement = str("Measurement"), s_mpi = str("MPI"), s_cuda = str("CUDA"),
                       s_cuda_window = str("CUDA window"), s_sampling = str("Sampling"), s_openmp = str("OpenMP"),
                       s_correlation = str("CUDA correlation id"),
                       s_correlation_description = str("the same on a host API call's Enter and on the Enter of the GPU work it launched");

  OTF2_GlobalDefWriter_WriteClockProperties(g, defs.clock.resolution, defs.clock.offset, defs.clock.length,
                                            defs.clock.realtime_ns);
  for (std::size_t i = 0; i < string_list.size(); ++i)
    OTF2_GlobalDefWriter_WriteString(g, static_cast<OTF2_StringRef>(i), string_list[i].c_str());
  OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_MEASUREMENT_SYSTEM, s_measurement, OTF2_PARADIGM_CLASS_PROCESS);
  OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_COMPILER, s_compiler, OTF2_PARADIGM_CLASS_PROCESS);
  OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_USER, s_user, OTF2_PARADIGM_CLASS_PROCESS);
  OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_PTHREAD, s_pthread, OTF2_PARADIGM_CLASS_THREAD_CREATE_WAIT);
  if (mpi) OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_MPI, s_mpi, OTF2_PARADIGM_CLASS_PROCESS);
  if (cuda) {
    OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_CUDA, s_cuda, OTF2_PARADIGM_CLASS_ACCELERATOR);
    OTF2_GlobalDefWriter_WriteAttribute(g, kCorrelationAttribute, s_correlation, s_correlation_description, OTF2_TYPE_UINT32);
  }
  if (sampling) OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_SAMPLING, s_sampling, OTF2_PARADIGM_CLASS_PROCESS);
  bool openmp = false;
  for (const auto& c : defs.comms) openmp = openmp || c.kind == comms::Kind::OpenMP;
  for (const auto& r : defs.regions) openmp = openmp || r.paradigm == regions::Paradigm::OpenMP;
  if (openmp) OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_OPENMP, s_openmp, OTF2_PARADIGM_CLASS_THREAD_FORK_JOIN);

  OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, s_machine, s_machine_cls, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
  {
    std::size_t i = 0;
    for (const auto& [host, id] : node_of_host) OTF2_GlobalDefWriter_WriteSystemTreeNode(g, id, s_host[i++], s_node_cls, 0);
  }
  for (std::size_t r = 0; r < defs.processes.size(); ++r)
    OTF2_GlobalDefWriter_WriteLocationGroup(g, static_cast<OTF2_LocationGroupRef>(r), s_group[r], OTF2_LOCATION_GROUP_TYPE_PROCESS,
                                            node_of_host[defs.processes[r].host], OTF2_UNDEFINED_LOCATION_GROUP);
  for (std::size_t k = 0; k < accel_order.size(); ++k) {
    const std::size_t r = accel_order[k].first;
    OTF2_GlobalDefWriter_WriteLocationGroup(g, static_cast<OTF2_LocationGroupRef>(defs.processes.size() + k), s_accel[k],
                                            OTF2_LOCATION_GROUP_TYPE_ACCELERATOR, node_of_host[defs.processes[r].host],
                                            static_cast<OTF2_LocationGroupRef>(r));
  }
  for (std::size_t r = 0; r < defs.processes.size(); ++r) {
    const auto& locs = defs.processes[r].locations;
    for (std::size_t i = 0; i < locs.size(); ++i) {
      const bool gpu = locs[i].type == static_cast<std::uint8_t>(LocationType::GpuStream);
      const OTF2_LocationGroupRef group = locs[i].group.empty() ? static_cast<OTF2_LocationGroupRef>(r) : accel[r][locs[i].group];
      OTF2_GlobalDefWriter_WriteLocation(g, locs[i].id, s_loc[r][i],
                                         gpu ? OTF2_LOCATION_TYPE_ACCELERATOR_STREAM : OTF2_LOCATION_TYPE_CPU_THREAD,
                                         locs[i].events, group);
    }
  }
  for (std::size_t i = 0; i < defs.regions.size(); ++i) {
    const auto& r = defs.regions[i];
    OTF2_GlobalDefWriter_WriteRegion(g, static_cast<OTF2_RegionRef>(i), s_reg[i].name, s_reg[i].canonical, s_reg[i].description,
                                     otf2_role(r.role), otf2_paradigm(r.paradigm), OTF2_REGION_FLAG_NONE, s_reg[i].file,
                                     r.begin_line < 0 ? 0u : static_cast<std::uint32_t>(r.begin_line),
                                     r.end_line < 0 ? 0u : static_cast<std::uint32_t>(r.end_line));
  }

  // Metrics: a member each; class 0 = the members every thread reads, class 1 = all of them (the
  // first location of each process, which also reads the per-process events).
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    const MetricMember& mm = metrics[i];
    OTF2_GlobalDefWriter_WriteMetricMember(g, static_cast<OTF2_MetricMemberRef>(i), s_metric[i].name, s_metric[i].description,
                                           mm.papi ? OTF2_METRIC_TYPE_PAPI : OTF2_METRIC_TYPE_OTHER,
                                           mm.absolute ? OTF2_METRIC_ABSOLUTE_POINT : OTF2_METRIC_ACCUMULATED_START,
                                           OTF2_TYPE_UINT64, OTF2_BASE_DECIMAL, 0, s_metric[i].unit);
  }
  for (unsigned c = 0; c < 2; ++c) {
    if (metric_class_size[c] == 0 || (c == 1 && metric_class_size[1] == metric_class_size[0])) continue;
    std::vector<OTF2_MetricMemberRef> members;
    for (unsigned i = 0; i < metric_class_size[c]; ++i) members.push_back(i);
    OTF2_GlobalDefWriter_WriteMetricClass(g, metric_class_ref[c], static_cast<std::uint8_t>(members.size()), members.data(),
                                          OTF2_METRIC_SYNCHRONOUS_STRICT, OTF2_RECORDER_KIND_CPU);
  }

  // Sampling: the interrupt generators (time in ns, or counts of events) and the calling
  // contexts, parents first (unification keeps that order).
  for (std::size_t i = 0; i < defs.generators.size(); ++i) {
    const auto& gen = defs.generators[i];
    OTF2_GlobalDefWriter_WriteInterruptGenerator(
        g, static_cast<OTF2_InterruptGeneratorRef>(i), s_gen[i],
        gen.time_based ? OTF2_INTERRUPT_GENERATOR_MODE_TIME : OTF2_INTERRUPT_GENERATOR_MODE_COUNT, OTF2_BASE_DECIMAL,
        gen.time_based ? -9 : 0, gen.period);
  }
  for (std::size_t i = 0; i < defs.contexts.size(); ++i) {
    const auto& c = defs.contexts[i];
    OTF2_GlobalDefWriter_WriteCallingContext(g, static_cast<OTF2_CallingContextRef>(i), c.region,
                                             OTF2_UNDEFINED_SOURCE_CODE_LOCATION,
                                             c.parent == contexts::kNoContext ? OTF2_UNDEFINED_CALLING_CONTEXT : c.parent);
  }

  // Groups. Per-process communicators (the pthread thread contingent, the OpenMP thread team,
  // the CUDA window's): per paradigm one COMM_LOCATIONS group of every location of every
  // process, and per process a COMM_GROUP of its own locations (indices into it; rank = the
  // location's index in its process, which the CUDA RMA events' remote ranks use). MPI: a
  // COMM_LOCATIONS group of each rank's master location (index = world rank), a COMM_GROUP per
  // distinct member list, and one COMM_SELF group.
  OTF2_GroupRef next_group = 0;
  std::vector<OTF2_GroupRef> comm_group(defs.comms.size(), OTF2_UNDEFINED_GROUP);
  bool any_mpi = false;
  for (const auto& c : defs.comms) any_mpi = any_mpi || !comms::per_process(c.kind);
  const auto per_process_groups = [&](comms::Kind kind, OTF2_Paradigm paradigm) {
    bool any = false;
    for (const auto& c : defs.comms) any = any || c.kind == kind;
    if (!any) return;
    std::vector<std::uint64_t> members;
    std::vector<std::size_t> first(defs.processes.size(), 0);
    for (std::size_t r = 0; r < defs.processes.size(); ++r) {
      first[r] = members.size();
      for (const auto& l : defs.processes[r].locations) members.push_back(l.id);
    }
    OTF2_GlobalDefWriter_WriteGroup(g, next_group++, s_empty, OTF2_GROUP_TYPE_COMM_LOCATIONS, paradigm, OTF2_GROUP_FLAG_NONE,
                                    static_cast<std::uint32_t>(members.size()), members.data());
    for (std::size_t i = 0; i < defs.comms.size(); ++i) {
      const auto& c = defs.comms[i];
      if (c.kind != kind || c.key_rank >= defs.processes.size()) continue;
      std::vector<std::uint64_t> ranks;
      for (std::size_t k = 0; k < defs.processes[c.key_rank].locations.size(); ++k) ranks.push_back(first[c.key_rank] + k);
      comm_group[i] = next_group++;
      OTF2_GlobalDefWriter_WriteGroup(g, comm_group[i], s_empty, OTF2_GROUP_TYPE_COMM_GROUP, paradigm, OTF2_GROUP_FLAG_NONE,
                                      static_cast<std::uint32_t>(ranks.size()), ranks.data());
    }
  };
  per_process_groups(comms::Kind::Threads, OTF2_PARADIGM_PTHREAD);
  per_process_groups(comms::Kind::Cuda, OTF2_PARADIGM_CUDA);
  per_process_groups(comms::Kind::OpenMP, OTF2_PARADIGM_OPENMP);
  if (any_mpi) {
    std::vector<std::uint64_t> masters;
    // (thread 0 << 32) | rank; a rank without data (a merge after a failed rank): its placeholder
    for (std::size_t r = 0; r < defs.processes.size(); ++r) {
      const std::uint64_t placeholder = placeholder_location(static_cast<std::uint32_t>(r));
      const auto& locs = defs.processes[r].locations;
      masters.push_back(!locs.empty() && locs[0].id == placeholder ? placeholder : r);
    }
    OTF2_GlobalDefWriter_WriteGroup(g, next_group++, s_empty, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                    OTF2_GROUP_FLAG_NONE, static_cast<std::uint32_t>(masters.size()), masters.data());
    std::map<std::vector<std::uint32_t>, OTF2_GroupRef> by_members;
    OTF2_GroupRef self_group = OTF2_UNDEFINED_GROUP;
    for (std::size_t i = 0; i < defs.comms.size(); ++i) {
      const auto& c = defs.comms[i];
      if (comms::per_process(c.kind)) continue;
      if (c.kind == comms::Kind::Self) {
        if (self_group == OTF2_UNDEFINED_GROUP) {
          self_group = next_group++;
          OTF2_GlobalDefWriter_WriteGroup(g, self_group, s_empty, OTF2_GROUP_TYPE_COMM_SELF, OTF2_PARADIGM_MPI,
                                          OTF2_GROUP_FLAG_NONE, 0, nullptr);
        }
        comm_group[i] = self_group;
        continue;
      }
      auto [it, fresh] = by_members.emplace(c.members, next_group);
      if (fresh) {
        ++next_group;
        std::vector<std::uint64_t> ranks(c.members.begin(), c.members.end());
        OTF2_GlobalDefWriter_WriteGroup(g, it->second, s_empty, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                        OTF2_GROUP_FLAG_NONE, static_cast<std::uint32_t>(ranks.size()), ranks.data());
      }
      comm_group[i] = it->second;
    }
  }
  for (std::size_t i = 0; i < defs.comms.size(); ++i) {
    const auto& c = defs.comms[i];
    if (comm_group[i] == OTF2_UNDEFINED_GROUP) continue;
    const OTF2_CommRef parent = c.parent == comms::kNoComm || c.parent >= i ? OTF2_UNDEFINED_COMM : c.parent;
    OTF2_GlobalDefWriter_WriteComm(g, static_cast<OTF2_CommRef>(i), s_comm[i], comm_group[i], parent, OTF2_COMM_FLAG_NONE);
  }
  // Each process's CUDA window, numbered 0.. in communicator order (unify's window_map).
  OTF2_RmaWinRef next_window = 0;
  for (std::size_t i = 0; i < defs.comms.size(); ++i)
    if (defs.comms[i].kind == comms::Kind::Cuda)
      OTF2_GlobalDefWriter_WriteRmaWin(g, next_window++, s_cuda_window, static_cast<OTF2_CommRef>(i), OTF2_RMA_WIN_FLAG_NONE);
  OTF2_Archive_CloseGlobalDefWriter(archive, g);
  return true;
}

// One process's local definitions (see finish()).
bool TraceWriter::Impl::write_scratch(const std::string& tmp, const char* description, const Definitions& defs,
                                      const std::vector<LocalDefs>& locals, const std::vector<std::uint64_t>& empty) {
  OTF2_Archive* a = OTF2_Archive_Open(tmp.c_str(), "traces", OTF2_FILEMODE_WRITE, stats.otf2_block_bytes, OTF2_CHUNK_SIZE_MIN,
                                      OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  if (!a) return false;
  static const OTF2_FlushCallbacks flush_cbs = {&Impl::pre_flush, nullptr};
  OTF2_Archive_SetFlushCallbacks(a, &flush_cbs, this);
  bool ok = OTF2_Archive_SetSerialCollectiveCallbacks(a) == OTF2_SUCCESS;
  OTF2_Archive_SetCreator(a, "prof " PROF_VERSION);
  OTF2_Archive_SetDescription(a, description);
  if (ok) {
    OTF2_Archive* shared = archive;
    archive = a;
    OTF2_Archive_OpenEvtFiles(a);
    for (std::uint64_t id : empty)
      if (OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(a, id)) OTF2_Archive_CloseEvtWriter(a, w);
    OTF2_Archive_CloseEvtFiles(a);
    OTF2_Archive_OpenDefFiles(a);
    for (const LocalDefs& l : locals) write_local(l, defs.clock);
    OTF2_Archive_CloseDefFiles(a);
    ok = !failed && write_global(defs);
    ok = OTF2_Archive_Close(a) == OTF2_SUCCESS && ok && !failed;
    archive = shared;
  } else {
    OTF2_Archive_Close(a);
  }
  return ok;
}

void TraceWriter::Impl::write_local(const LocalDefs& l, const ClockInfo& clock) {
  const auto make = [](const std::vector<std::uint32_t>& v) {
    return v.empty() ? nullptr : OTF2_IdMap_CreateFromUint32Array(v.size(), v.data(), true);
  };
  OTF2_IdMap* region_map = make(l.region_map);
  OTF2_IdMap* comm_map = make(l.comm_map);
  OTF2_IdMap* window_map = make(l.window_map);
  OTF2_IdMap* context_map = make(l.context_map);
  OTF2_IdMap* generator_map = make(l.generator_map);
  for (std::uint64_t id : l.locations) {
    if (failed) break;
    OTF2_DefWriter* dw = OTF2_Archive_GetDefWriter(archive, id);
    if (!dw) continue;
    if (region_map) OTF2_DefWriter_WriteMappingTable(dw, OTF2_MAPPING_REGION, region_map);
    if (comm_map) OTF2_DefWriter_WriteMappingTable(dw, OTF2_MAPPING_COMM, comm_map);
    // RMA events (the CUDA window) carry their communicator's local id.
    if (window_map) OTF2_DefWriter_WriteMappingTable(dw, OTF2_MAPPING_RMA_WIN, window_map);
    if (context_map) OTF2_DefWriter_WriteMappingTable(dw, OTF2_MAPPING_CALLING_CONTEXT, context_map);
    if (generator_map) OTF2_DefWriter_WriteMappingTable(dw, OTF2_MAPPING_INTERRUPT_GENERATOR, generator_map);
    if (l.clock_offsets.empty()) {
      OTF2_DefWriter_WriteClockOffset(dw, clock.offset, 0, 0.0);
      OTF2_DefWriter_WriteClockOffset(dw, clock.offset + clock.length, 0, 0.0);
    }
    for (const auto& [local, offset] : l.clock_offsets) OTF2_DefWriter_WriteClockOffset(dw, local, offset, 0.0);
    OTF2_Archive_CloseDefWriter(archive, dw);
  }
  for (OTF2_IdMap* map : {region_map, comm_map, window_map, context_map, generator_map})
    if (map) OTF2_IdMap_Free(map);
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
  // After a failure only the archive's collective steps are taken (the other processes take them
  // too), nothing more is written; the files go at the end.

  // Local definitions of this process's locations: two ClockOffsets (offset 0; so readers
  // interpolate nothing, and every location has its traces/<id>.def), and the mapping tables
  // from the local region and communicator ids its events carry to the global ones.
  OTF2_Archive_OpenDefFiles(m.archive);
  LocalDefs own{defs.local_locations, defs.clock_offsets, defs.region_map, defs.comm_map,
                defs.window_map, defs.context_map, defs.generator_map};
  m.write_local(own, defs.clock);
  OTF2_Archive_CloseDefFiles(m.archive);

  bool global_ok = true;
  if (defs.is_root && !m.failed) global_ok = m.write_global(defs);
  // Rank 0 writes traces.otf2 here; the close is collective.
  const OTF2_ErrorCode rc = OTF2_Archive_Close(m.archive);
  m.archive = nullptr;
  m.reset_callback();
  std::string local_error;
  if (!global_ok) local_error = "cannot write traces.def";
  else if (rc != OTF2_SUCCESS && !m.failed) local_error = std::string("closing the OTF2 archive failed: ") + OTF2_Error_GetDescription(rc);
  const bool ok = !m.failed && local_error.empty();
  const std::uint32_t failed_rank = m.mpp ? first_failed(*m.mpp, ok) : (ok ? kNoRank : 0);
  if (failed_rank == kNoRank) {
    m.recut_events(defs);
    return true;
  }
  // Some process could not write its part: nobody keeps a trace that readers would reject.
  m.remove_archive(defs);
  if (m.failed) *error = "";  // take_failure() has the line
  else if (!local_error.empty()) *error = local_error + "; the trace is removed";
  else if (defs.is_root)
    *error = "rank " + std::to_string(failed_rank) + " could not write its trace (see its message); the trace is removed";
  else *error = "";
  return false;
}

// The chunk size was chosen at open() from the locations known then (budget::otf2_chunk_bytes);
// threads that came later can make it too big: a reader holds one chunk per location (4 MiB
// chunks and 2,000 locations: 8 GB). Then every process re-cuts its event files that are longer
// than the new chunk (shorter ones are one chunk either way) into `<id>.evt.recut`, rank 0 the
// anchor into `traces.otf2.recut`; only when all have done so are they renamed over the old ones
// (a kill in between leaves a trace of mixed chunk sizes: its window is those renames). Any
// failure keeps the old chunks: the trace stays readable, with more memory.
void TraceWriter::Impl::recut_events(const Definitions& defs) {
  const std::uint64_t from = stats.otf2_block_bytes;
  std::uint64_t to = from, locations = 0;
  if (defs.is_root) {
    for (const auto& p : defs.processes) locations += p.locations.size();
    to = std::min(from, budget::otf2_chunk_bytes(locations));
  }
  if (mpp && !mpp->bcast(&to, sizeof to, 0)) return;
  if (to >= from) return;
  const auto t0 = std::chrono::steady_clock::now();
  const auto evt = [&](std::uint64_t id) { return dir + "/traces/" + std::to_string(id) + ".evt"; };
  std::vector<std::uint64_t> cut;
  chunks::RecutCounts sum;
  std::string why;
  bool ok = true;
  for (std::uint64_t id : defs.local_locations) {
    struct stat st {};
    if (::lstat(evt(id).c_str(), &st) != 0 || static_cast<std::uint64_t>(st.st_size) <= to) continue;
    chunks::RecutCounts c;
    if (!(ok = chunks::recut_file(evt(id), evt(id) + ".recut", from, to, &c, &why))) break;
    cut.push_back(id);
    sum.events += c.events;
    sum.bytes_in += c.bytes_in;
    sum.bytes_out += c.bytes_out;
  }
  const std::string anchor = dir + "/traces.otf2";
  if (ok && defs.is_root) ok = chunks::recut_anchor(anchor, anchor + ".recut", from, to, &why);
  const std::uint32_t failed = mpp ? first_failed(*mpp, ok) : (ok ? kNoRank : 0);
  if (failed != kNoRank) {
    for (std::uint64_t id : cut) ::unlink((evt(id) + ".recut").c_str());
    if (defs.is_root) ::unlink((anchor + ".recut").c_str());
    if (!ok)
      log::warning("the trace keeps its OTF2 event chunks of %" PRIu64 " KiB: they could not be re-cut to %" PRIu64
                   " KiB (%s); a reader of it needs up to %" PRIu64 " MiB for them", from >> 10, to >> 10, why.c_str(),
                   (std::max<std::uint64_t>(locations, defs.local_locations.size()) * from) >> 20);
    return;
  }
  for (std::uint64_t id : cut) ::rename((evt(id) + ".recut").c_str(), evt(id).c_str());
  if (mpp) mpp->barrier();
  if (defs.is_root) {
    ::rename((anchor + ".recut").c_str(), anchor.c_str());
    log::info(1, "trace: OTF2 event chunks re-cut from %" PRIu64 " KiB to %" PRIu64 " KiB for %" PRIu64
                 " locations (a reader holds one per location: %" PRIu64 " MiB); %zu event files here rewritten, %.1f MiB, "
                 "%" PRIu64 " events, in %.0f ms",
              from >> 10, to >> 10, locations, (locations * to) >> 20, cut.size(),
              static_cast<double>(sum.bytes_out) / (1 << 20), sum.events,
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  stats.otf2_block_bytes = to;
}

namespace {

/// Removes a merge's folder (its anchor and global definitions; anything else it may hold after
/// a kill) without following links.
void remove_merge_dir(const std::string& path) {
  for (const std::string& sub : {path + "/traces", path})
    if (DIR* d = ::opendir(sub.c_str())) {
      while (const struct dirent* e = ::readdir(d))
        if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) ::unlink((sub + "/" + e->d_name).c_str());
      ::closedir(d);
    }
  ::rmdir((path + "/traces").c_str());
  ::rmdir(path.c_str());
}

/// Where the link `path` points; "" when it is none.
std::string read_link(const std::string& path) {
  char buf[4096];
  const ssize_t n = ::readlink(path.c_str(), buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

/// `path` as a link to `target`, replacing what is there in one rename.
bool replace_with_link(const std::string& target, const std::string& path) {
  if (read_link(path) == target) return true;
  const std::string tmp = path + ".link-" + std::to_string(::getpid());
  ::unlink(tmp.c_str());
  return ::symlink(target.c_str(), tmp.c_str()) == 0 && ::rename(tmp.c_str(), path.c_str()) == 0;
}

}  // namespace

void remove_scratch_archive(const std::string& path) { remove_merge_dir(path); }

void TraceWriter::on_merge_step(std::function<void(const std::string&)> observer) { impl_->merge_step = std::move(observer); }

bool TraceWriter::write_merged(const Definitions& global, const std::vector<LocalDefs>& locals, const std::string& stage,
                               std::string* error) {
  Impl& m = *impl_;
  if (!m.archive || m.failed) {
    *error = "no OTF2 archive open";
    return false;
  }
  const auto step = [&](const char* what) {
    if (m.merge_step) m.merge_step(what);
  };
  for (auto& [id, loc] : m.locs)
    if (loc.writer) close_location(id);
  Definitions defs = global;
  std::vector<std::uint64_t> placeholders;
  for (std::size_t r = 0; r < defs.processes.size(); ++r) {
    auto& p = defs.processes[r];
    if (!p.locations.empty()) continue;
    const std::uint64_t id = placeholder_location(static_cast<std::uint32_t>(r));
    p.locations.push_back({id, "no data (the rank ended without writing its trace)", 0, 0, ""});
    if (p.host.empty()) p.host = "unknown host";
    placeholders.push_back(id);
  }
  // The anchor and traces.def of each merge live in a folder of their own, <stage>/trace-<pid>;
  // the archive's traces.otf2 and traces.def are links through <stage>/current, which one rename
  // moves to the new merge. (OTF2 readers check the anchor's count of global definitions against
  // traces.def: two files renamed one after the other would leave a window in which a kill, such
  // as mpirun's SIGKILL after its SIGTERM, leaves an archive that otf2-print rejects.)
  const std::string stage_dir = m.dir + "/" + stage, current = stage_dir + "/current";
  ::mkdir(stage_dir.c_str(), 0755);
  const std::string previous = read_link(current);
  static unsigned merges = 0;  // a process that merges twice (checkpoints) never reuses a folder
  const std::string name = "trace-" + std::to_string(::getpid()) + "-" + std::to_string(++merges), tmp = stage_dir + "/" + name;
  // Merges killed before they were published (callers hold a lock: none runs now).
  if (DIR* d = ::opendir(stage_dir.c_str())) {
    std::vector<std::string> stale;
    while (const struct dirent* e = ::readdir(d))
      if (std::strncmp(e->d_name, "trace-", 6) == 0 && e->d_name != previous) stale.push_back(e->d_name);
    ::closedir(d);
    for (const std::string& s : stale) remove_merge_dir(stage_dir + "/" + s);
  }
  // The placeholders' event files: empty.
  std::vector<LocalDefs> all = locals;
  all.push_back(LocalDefs{});
  all.back().locations = placeholders;
  bool ok = m.write_scratch(tmp, "prof measurement (merged after a failed rank)", defs, all, placeholders);
  step("written");
  // Into the archive's traces/: the local definitions and the placeholders' event files. They
  // fit the previous traces.def too: the global ids of earlier merges stay (partial_trace), and
  // a new location's files are read only once a traces.def names it.
  const std::string from = tmp + "/traces/", to = m.dir + "/traces/";
  if (ok) {
    if (DIR* d = ::opendir(from.c_str())) {
      while (const struct dirent* e = ::readdir(d)) {
        if (e->d_name[0] == '.') continue;
        if (::rename((from + e->d_name).c_str(), (to + e->d_name).c_str()) != 0) ok = false;
      }
      ::closedir(d);
    }
    ::rmdir(from.c_str());
    step("local definitions");
  }
  // Published in one rename; the archive's names become links through `current` once (traces.def
  // first: a kill in between leaves no anchor yet, or the previous one reading the same files).
  if (ok) {
    ok = replace_with_link(name, current);
    step("current");
    ok = ok && replace_with_link(stage + "/current/traces.def", m.dir + "/traces.def");
    step("traces.def");
    ok = ok && replace_with_link(stage + "/current/traces.otf2", m.dir + "/traces.otf2");
    step("traces.otf2");
  }
  if (ok) {
    if (!previous.empty() && previous != name) remove_merge_dir(stage_dir + "/" + previous);
    for (const auto& p : defs.processes)  // a placeholder of an earlier merge, for a rank that is here now
      if (!p.locations.empty() && p.locations[0].id != placeholder_location(p.rank)) {
        const std::string stale = to + std::to_string(placeholder_location(p.rank));
        ::unlink((stale + ".evt").c_str());
        ::unlink((stale + ".def").c_str());
      }
  } else {
    *error = "cannot write the merged trace definitions in '" + m.dir + "'" +
             (m.failed ? " (" + m.failure_detail + ")" : std::string()) + "; check free space and permissions there";
    if (read_link(current) != name) remove_merge_dir(tmp);
  }
  return ok;
}

}  // namespace prof::otf2w
