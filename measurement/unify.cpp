// SPDX-License-Identifier: BSD-3-Clause
#include "measurement/unify.hpp"

#include <cstring>
#include <unordered_map>

#include "measurement/bytes.hpp"
#include "measurement/definitions/contexts.hpp"
#include "measurement/mpp.hpp"

namespace prof::unify {

namespace {

using Out = bytes::Writer;
using In = bytes::Reader;

void put_region(Out& o, const regions::RegionDef& r) {
  o.str(r.name);
  o.str(r.canonical);
  o.str(r.file);
  o.u32(static_cast<std::uint32_t>(r.begin_line));
  o.u32(static_cast<std::uint32_t>(r.end_line));
  o.u8(static_cast<std::uint8_t>(r.paradigm));
  o.u8(static_cast<std::uint8_t>(r.role));
}

regions::RegionDef get_region(In& in) {
  regions::RegionDef r;
  r.name = in.str();
  r.canonical = in.str();
  r.file = in.str();
  r.begin_line = static_cast<int>(in.u32());
  r.end_line = static_cast<int>(in.u32());
  r.paradigm = static_cast<regions::Paradigm>(in.u8());
  r.role = static_cast<regions::Role>(in.u8());
  return r;
}

std::string region_key(const regions::RegionDef& r) {
  Out o;
  put_region(o, r);
  return std::string(o.data().begin(), o.data().end());
}

// A calling context's identity across processes: a 16-byte hash of its parent's key and its
// region's key (two FNV-1a hashes with different offsets).
std::string context_key(const std::string& parent_key, const std::string& region_key) {
  std::uint64_t h[2] = {1469598103934665603ull, 0x84222325cbf29ce4ull};
  for (std::uint64_t& x : h) {
    for (char c : parent_key) x = (x ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    x = (x ^ 0xffu) * 1099511628211ull;
    for (char c : region_key) x = (x ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  }
  return std::string(reinterpret_cast<const char*>(h), sizeof h);
}

std::string generator_key(const contexts::GeneratorDef& g) {
  return g.name + (g.time_based ? "@t" : "@c") + std::to_string(g.period);
}

// A calling context as exchanged: its key, its parent's ("" for a root) and its region (an index
// into the regions of the same set).
struct ContextEntry {
  std::string key, parent_key;
  std::uint32_t region = 0;
};

// A communicator's identity across processes (parents by the same key).
std::string comm_key(const comms::CommDef& c) {
  Out o;
  o.u8(static_cast<std::uint8_t>(c.kind));
  if (comms::per_process(c.kind)) o.u32(c.key_rank);
  if (c.kind == comms::Kind::Mpi) {
    o.u32(c.key_rank);
    o.u64(c.key_serial);
  }
  return std::string(o.data().begin(), o.data().end());
}

// A communicator as exchanged: its definition with the parent given by key.
struct CommEntry {
  comms::CommDef def;
  std::string parent_key;  // empty: none
};

void put_comm(Out& o, const CommEntry& e) {
  const comms::CommDef& c = e.def;
  o.u8(static_cast<std::uint8_t>(c.kind));
  o.u32(c.key_rank);
  o.u64(c.key_serial);
  o.str(c.name);
  o.u64(c.members.size());
  for (std::uint32_t m : c.members) o.u32(m);
  o.str(e.parent_key);
}

CommEntry get_comm(In& in) {
  CommEntry e;
  comms::CommDef& c = e.def;
  c.kind = static_cast<comms::Kind>(in.u8());
  c.key_rank = in.u32();
  c.key_serial = in.u64();
  c.name = in.str();
  const std::uint64_t n = in.count(4);
  for (std::uint64_t i = 0; i < n && in.ok(); ++i) c.members.push_back(in.u32());
  e.parent_key = in.str();
  return e;
}

void put_process(Out& o, const ProcessPart& p) {
  o.u32(p.rank);
  o.str(p.host);
  o.u64(p.start);
  o.u64(p.end);
  o.u64(p.locations.size());
  for (const auto& l : p.locations) {
    o.u64(l.id);
    o.str(l.name);
    o.u64(l.events);
    o.u8(l.type);
    o.str(l.group);
  }
}

ProcessPart get_process(In& in) {
  ProcessPart p;
  p.rank = in.u32();
  p.host = in.str();
  p.start = in.u64();
  p.end = in.u64();
  const std::uint64_t n = in.u64();
  for (std::uint64_t i = 0; i < n && in.ok(); ++i) {
    LocationPart l;
    l.id = in.u64();
    l.name = in.str();
    l.events = in.u64();
    l.type = in.u8();
    l.group = in.str();
    p.locations.push_back(std::move(l));
  }
  return p;
}

// The set a process holds during the reduction: its own definitions plus those merged in.
struct Set {
  std::vector<regions::RegionDef> regions;
  std::unordered_map<std::string, std::uint32_t> region_index;
  std::vector<CommEntry> comms;
  std::unordered_map<std::string, std::uint32_t> comm_index;
  std::vector<ProcessPart> processes;
  std::vector<ContextEntry> contexts;  // parents before children
  std::unordered_map<std::string, std::uint32_t> context_index;
  std::vector<contexts::GeneratorDef> generators;
  std::unordered_map<std::string, std::uint32_t> generator_index;
  Timestamp start = ~Timestamp{0}, end = 0;

  std::uint32_t add_context(ContextEntry e) {
    auto [it, fresh] = context_index.emplace(e.key, static_cast<std::uint32_t>(contexts.size()));
    if (fresh) contexts.push_back(std::move(e));
    return it->second;
  }
  std::uint32_t add_generator(const contexts::GeneratorDef& g) {
    auto [it, fresh] = generator_index.emplace(generator_key(g), static_cast<std::uint32_t>(generators.size()));
    if (fresh) generators.push_back(g);
    return it->second;
  }

  std::uint32_t add_region(const regions::RegionDef& r) {
    auto [it, fresh] = region_index.emplace(region_key(r), static_cast<std::uint32_t>(regions.size()));
    if (fresh) regions.push_back(r);
    else regions::keep_throttled(regions[it->second], r);
    return it->second;
  }
  std::uint32_t add_comm(CommEntry e) {
    auto [it, fresh] = comm_index.emplace(comm_key(e.def), static_cast<std::uint32_t>(comms.size()));
    if (fresh) comms.push_back(std::move(e));
    return it->second;
  }

  std::vector<char> encode() const {
    Out o;
    o.u64(start);
    o.u64(end);
    o.u64(regions.size());
    for (const auto& r : regions) {
      put_region(o, r);
      o.u64(r.throttled_visits);  // not part of the key: a region throttled in some ranks only
      o.u32(r.throttled_mean_ns);
    }
    o.u64(comms.size());
    for (const auto& c : comms) put_comm(o, c);
    o.u64(processes.size());
    for (const auto& p : processes) put_process(o, p);
    o.u64(contexts.size());
    for (const auto& c : contexts) {
      o.str(c.key);
      o.str(c.parent_key);
      o.u32(c.region);
    }
    o.u64(generators.size());
    for (const auto& g : generators) {
      o.str(g.name);
      o.u8(g.time_based ? 1 : 0);
      o.u64(g.period);
    }
    return std::move(o.data());
  }

  // Merges another process's set: its new keys after ours, in its order (so a parent
  // communicator, always before its children in a process's list, stays before them).
  bool merge(const std::vector<char>& bytes) {
    In in(bytes.data(), bytes.size());
    const Timestamp s = in.u64(), e = in.u64();
    if (s < start) start = s;
    if (e > end) end = e;
    const std::uint64_t nr = in.u64();
    std::vector<std::uint32_t> region_of;  // the other set's region index → ours
    for (std::uint64_t i = 0; i < nr && in.ok(); ++i) {
      regions::RegionDef r = get_region(in);
      r.throttled_visits = in.u64();
      r.throttled_mean_ns = in.u32();
      region_of.push_back(add_region(r));
    }
    const std::uint64_t nc = in.u64();
    for (std::uint64_t i = 0; i < nc && in.ok(); ++i) add_comm(get_comm(in));
    const std::uint64_t np = in.u64();
    for (std::uint64_t i = 0; i < np && in.ok(); ++i) processes.push_back(get_process(in));
    const std::uint64_t nx = in.u64();
    for (std::uint64_t i = 0; i < nx && in.ok(); ++i) {
      ContextEntry e;
      e.key = in.str();
      e.parent_key = in.str();
      const std::uint32_t r = in.u32();
      if (r >= region_of.size()) return false;
      e.region = region_of[r];
      add_context(std::move(e));
    }
    const std::uint64_t ng = in.u64();
    for (std::uint64_t i = 0; i < ng && in.ok(); ++i) {
      contexts::GeneratorDef g;
      g.name = in.str();
      g.time_based = in.u8() != 0;
      g.period = in.u64();
      add_generator(g);
    }
    return in.ok() && in.done();
  }
};

bool bcast_bytes(Mpp* mpp, std::vector<char>* data) {
  std::uint64_t n = data->size();
  if (!mpp->bcast(&n, sizeof n, 0)) return false;
  data->resize(n);
  return n == 0 || mpp->bcast(data->data(), n, 0);
}

}  // namespace

bool tree_reduce(Mpp* mpp, const std::function<std::vector<char>()>& encode,
                 const std::function<bool(const std::vector<char>&)>& merge, const char* what, std::string* error,
                 std::uint64_t* received_bytes) {
  // Every message starts with a status byte: a process whose subtree failed still sends upward
  // (status 0, no data), so that no process waits for one that gave up; rank 0 learns of any
  // failure below it.
  const std::uint32_t rank = mpp ? mpp->rank() : 0, size = mpp ? mpp->size() : 1;
  bool ok = true;
  for (std::uint32_t step = 1; step < size; step <<= 1) {
    if (rank % (2 * step) == step) {
      std::vector<char> bytes{static_cast<char>(ok ? 1 : 0)};
      if (ok) {
        const std::vector<char> data = encode();
        bytes.insert(bytes.end(), data.begin(), data.end());
      }
      if (!mpp->send(rank - step, bytes.data(), bytes.size()) && ok) {
        *error = std::string("unification: sending the ") + what + " to rank " + std::to_string(rank - step) + " failed";
        ok = false;
      }
      return ok;
    }
    if (rank % (2 * step) == 0 && rank + step < size) {
      std::vector<char> bytes;
      const bool received = mpp->recv(rank + step, &bytes);
      if (received_bytes) *received_bytes += bytes.size();
      const bool theirs = received && !bytes.empty() && bytes[0] == 1;
      if (ok && (!theirs || !merge(std::vector<char>(bytes.begin() + 1, bytes.end())))) {
        *error = std::string("unification: the ") + what + " of rank " + std::to_string(rank + step) +
                 (received && !bytes.empty() && bytes[0] == 0 ? "'s part of the tree failed" : " were not received intact");
        ok = false;
      }
    }
  }
  return ok;
}

std::vector<char> encode(const ProcessPart& p) {
  Out o;
  put_process(o, p);
  return std::move(o.data());
}

bool decode(const std::vector<char>& bytes, ProcessPart* p) {
  In in(bytes.data(), bytes.size());
  *p = get_process(in);
  return in.ok() && in.done();
}

namespace {

// One process's own definitions as unification starts from them, and the key of each of its
// local ids (to map them to global ids once the global keys are known).
struct Local {
  Set set;
  std::vector<std::string> region_keys, comm_keys, context_keys, generator_keys;
};

Local build_local(ProcessPart self, const std::vector<regions::RegionDef>& regions, const std::vector<comms::CommDef>& comms,
                  std::uint32_t rank) {
  Local l;
  Set& set = l.set;
  self.rank = rank;
  set.start = self.start;
  set.end = self.end;
  for (const auto& r : regions) {
    set.add_region(r);
    l.region_keys.push_back(region_key(r));
  }
  // Own communicators: the thread contingent keyed by this process; parents by key.
  for (const auto& c : comms) {
    CommEntry e{c, ""};
    if (comms::per_process(c.kind)) e.def.key_rank = rank;
    if (c.parent != comms::kNoComm && c.parent < l.comm_keys.size()) e.parent_key = l.comm_keys[c.parent];
    l.comm_keys.push_back(comm_key(e.def));
    set.add_comm(std::move(e));
  }
  set.processes.push_back(std::move(self));
  // Own calling contexts (sampling): keys from their parents' and their regions' keys.
  for (const auto& c : contexts::snapshot()) {
    ContextEntry e;
    e.parent_key = c.parent < l.context_keys.size() ? l.context_keys[c.parent] : std::string();
    const regions::RegionDef& r = c.region < regions.size() ? regions[c.region] : regions::RegionDef{};
    e.region = set.add_region(r);
    e.key = context_key(e.parent_key, region_key(r));
    l.context_keys.push_back(e.key);
    set.add_context(std::move(e));
  }
  for (const auto& g : contexts::generators()) {
    set.add_generator(g);
    l.generator_keys.push_back(generator_key(g));
  }
  return l;
}

// What rank 0 tells every process: whether the reduction worked, the time span, and the global
// keys in global id order.
std::vector<char> global_keys(const Set& set, bool ok) {
  Out o;
  o.u8(ok ? 1 : 0);
  o.u64(set.start);
  o.u64(set.end);
  o.u64(set.regions.size());
  for (const auto& r : set.regions) o.str(region_key(r));
  o.u64(set.comms.size());
  for (const auto& c : set.comms) o.str(comm_key(c.def));
  o.u64(set.contexts.size());
  for (const auto& c : set.contexts) o.str(c.key);
  o.u64(set.generators.size());
  for (const auto& g : set.generators) o.str(generator_key(g));
  return std::move(o.data());
}

// The mapping tables of one process from the global keys (after their status byte). A local id
// missing globally (an internal error) maps to 0 and is reported in `error`; false: damaged keys.
bool map_local(const Local& l, In& in, Result* out, std::string* error) {
  out->start = in.u64();
  out->end = in.u64();
  std::unordered_map<std::string, std::uint32_t> global_regions, global_comms;
  const std::uint64_t nr = in.u64();
  for (std::uint64_t i = 0; i < nr && in.ok(); ++i) global_regions.emplace(in.str(), static_cast<std::uint32_t>(i));
  const std::uint64_t nc = in.u64();
  // RMA windows (the CUDA windows, one per communicator of kind Cuda) are numbered 0.. in the
  // global communicators' order, the same numbering the root's writer uses.
  std::vector<std::uint32_t> window_of(static_cast<std::size_t>(nc), 0);
  std::uint32_t windows = 0;
  for (std::uint64_t i = 0; i < nc && in.ok(); ++i) {
    std::string key = in.str();
    if (!key.empty() && static_cast<std::uint8_t>(key[0]) == static_cast<std::uint8_t>(comms::Kind::Cuda))
      window_of[static_cast<std::size_t>(i)] = windows++;
    global_comms.emplace(std::move(key), static_cast<std::uint32_t>(i));
  }
  std::unordered_map<std::string, std::uint32_t> global_contexts, global_generators;
  const std::uint64_t nx = in.u64();
  for (std::uint64_t i = 0; i < nx && in.ok(); ++i) global_contexts.emplace(in.str(), static_cast<std::uint32_t>(i));
  const std::uint64_t ng = in.u64();
  for (std::uint64_t i = 0; i < ng && in.ok(); ++i) global_generators.emplace(in.str(), static_cast<std::uint32_t>(i));
  if (!in.ok()) {
    *error = "unification: the global definitions arrived damaged";
    return false;
  }
  std::size_t missing = 0;
  const auto map = [&](const std::vector<std::string>& keys, const std::unordered_map<std::string, std::uint32_t>& global,
                       std::vector<std::uint32_t>* table) {
    table->clear();
    for (const auto& k : keys) {
      auto it = global.find(k);
      missing += it == global.end();
      table->push_back(it == global.end() ? 0 : it->second);
    }
  };
  map(l.region_keys, global_regions, &out->region_map);
  map(l.comm_keys, global_comms, &out->comm_map);
  out->window_map.clear();
  for (std::uint32_t g : out->comm_map) out->window_map.push_back(g < window_of.size() ? window_of[g] : 0);
  map(l.context_keys, global_contexts, &out->context_map);
  map(l.generator_keys, global_generators, &out->generator_map);
  if (missing)
    *error = "unification: " + std::to_string(missing) + " definitions of this process are missing from the global ones "
             "(an internal error; please report it); their events refer to definition 0";
  return true;
}

// The root's result: the global definitions, processes by rank (`size` of them; absent ranks
// keep their rank and no locations).
void fill_root(Set& set, std::uint32_t size, Result* out) {
  out->regions = std::move(set.regions);
  out->comms.clear();
  for (auto& e : set.comms) {
    comms::CommDef c = std::move(e.def);
    c.parent = comms::kNoComm;
    if (!e.parent_key.empty()) {
      auto it = set.comm_index.find(e.parent_key);
      if (it != set.comm_index.end()) c.parent = it->second;
    }
    out->comms.push_back(std::move(c));
  }
  out->contexts.clear();
  for (const auto& c : set.contexts) {
    auto p = c.parent_key.empty() ? set.context_index.end() : set.context_index.find(c.parent_key);
    out->contexts.push_back({c.region, p == set.context_index.end() ? contexts::kNoContext : p->second});
  }
  out->generators = set.generators;
  out->processes.assign(size, ProcessPart{});
  for (std::uint32_t r = 0; r < size; ++r) out->processes[r].rank = r;
  for (auto& p : set.processes)
    if (p.rank < size) out->processes[p.rank] = std::move(p);
}

void put_keys(Out& o, const std::vector<std::string>& keys) {
  o.u64(keys.size());
  for (const auto& k : keys) o.str(k);
}

std::vector<std::string> get_keys(In& in) {
  std::vector<std::string> keys;
  const std::uint64_t n = in.count(8);
  for (std::uint64_t i = 0; i < n && in.ok(); ++i) keys.push_back(in.str());
  return keys;
}

}  // namespace

bool unify(Mpp* mpp, ProcessPart self, const std::vector<regions::RegionDef>& regions,
           const std::vector<comms::CommDef>& comms, Result* out, std::string* error) {
  const std::uint32_t rank = mpp ? mpp->rank() : 0, size = mpp ? mpp->size() : 1;
  Local local = build_local(std::move(self), regions, comms, rank);
  Set& set = local.set;
  // A failure anywhere reaches rank 0, which tells every process through the broadcast below, so
  // that all of them give up together (none waits in a collective the others skip).
  const bool reduced = tree_reduce(mpp, [&] { return set.encode(); }, [&](const std::vector<char>& b) { return set.merge(b); },
                                   "definitions", error, &out->bytes_received);
  if (rank == 0 && size > 1) out->bytes_union = set.encode().size();

  // The global keys to every process.
  std::vector<char> keys;
  if (rank == 0) keys = global_keys(set, reduced);
  if (mpp && !bcast_bytes(mpp, &keys)) {
    *error = "unification: broadcasting the global definitions failed";
    return false;
  }
  In in(keys.data(), keys.size());
  if (in.u8() != 1) {
    if (reduced || error->empty()) *error = "unification failed on another rank (see rank 0's message)";
    return false;
  }
  // From here every process goes on to the collective writing, whatever happens locally.
  if (!map_local(local, in, out, error)) return false;
  if (rank == 0) fill_root(set, size, out);
  return true;
}

std::vector<char> encode_part(ProcessPart self, const std::vector<regions::RegionDef>& regions,
                              const std::vector<comms::CommDef>& comms, std::uint32_t rank) {
  const Local l = build_local(std::move(self), regions, comms, rank);
  Out o;
  o.u32(rank);
  const std::vector<char> set = l.set.encode();
  o.str(std::string(set.begin(), set.end()));
  put_keys(o, l.region_keys);
  put_keys(o, l.comm_keys);
  put_keys(o, l.context_keys);
  put_keys(o, l.generator_keys);
  return std::move(o.data());
}

bool merge_parts(const std::vector<std::vector<char>>& parts, std::uint32_t size, Result* global,
                 std::vector<Result>* maps, std::string* error) {
  std::vector<Local> locals(parts.size());
  Set all;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    In in(parts[i].data(), parts[i].size());
    const std::uint32_t rank = in.u32();
    const std::string bytes = in.str();
    const std::vector<char> set(bytes.begin(), bytes.end());
    Local& l = locals[i];
    l.region_keys = get_keys(in);
    l.comm_keys = get_keys(in);
    l.context_keys = get_keys(in);
    l.generator_keys = get_keys(in);
    if (!in.ok() || !in.done() || rank >= size || !all.merge(set)) {
      *error = "the definitions part " + std::to_string(i) + " is damaged";
      return false;
    }
  }
  const std::vector<char> keys = global_keys(all, true);
  maps->assign(parts.size(), Result{});
  for (std::size_t i = 0; i < parts.size(); ++i) {
    In in(keys.data(), keys.size());
    in.u8();
    if (!map_local(locals[i], in, &(*maps)[i], error)) return false;
  }
  global->start = all.start;
  global->end = all.end;
  fill_root(all, size, global);
  return true;
}

}  // namespace prof::unify
