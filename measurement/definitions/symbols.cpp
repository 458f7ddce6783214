// SPDX-License-Identifier: BSD-3-Clause
// Symbol resolution: per loaded ELF object one sorted table of function symbols (read once with
// libelf from the file on disk) and, opened lazily on the first lookup, a libdwfl module placed
// at the object's load bias for DWARF file/line. All state behind one mutex.
#include "measurement/definitions/symbols.hpp"

#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <link.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace prof::symbols {

// ---------------------------------------------------------------------------------------------
// Pure helpers
// ---------------------------------------------------------------------------------------------

namespace {

// Suffix components GCC (and clang) append to the name of a clone or an outlined part.
bool is_clone_keyword(std::string_view word) {
  static constexpr std::string_view kWords[] = {"constprop", "isra",       "part",
                                                "cold",      "lto_priv",   "clone",
                                                "localalias", "llvm"};
  for (std::string_view w : kWords) {
    if (word == w) return true;
  }
  return false;
}

// Length of the base part of `symbol`: the prefix before the first ".<keyword>" component
// (keyword followed by '.' or the end). symbol.size() when it is no clone.
std::size_t base_length(std::string_view symbol) {
  std::size_t pos = symbol.find('.');
  while (pos != std::string_view::npos) {
    if (pos > 0) {
      std::size_t end = symbol.find('.', pos + 1);
      std::string_view word =
          symbol.substr(pos + 1, end == std::string_view::npos ? std::string_view::npos
                                                               : end - pos - 1);
      if (is_clone_keyword(word)) return pos;
    }
    pos = symbol.find('.', pos + 1);
  }
  return symbol.size();
}

bool fortran_module_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.'; }

bool identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
}

// gfortran's name of a module procedure, "__<module>_MOD_<procedure>" (a submodule's own ones:
// "__<module>.<submodule>_MOD_<procedure>"), as "<module>::<procedure>"; "" for any other name.
// gfortran writes Fortran names in lower case, so "_MOD_" cannot be part of the module's name;
// the procedure part may have upper case in names it makes itself (__copy_<module>_Mytype).
std::string fortran_module_procedure(std::string_view in) {
  if (in.size() < 9 || in.substr(0, 2) != "__" || in[2] < 'a' || in[2] > 'z') return "";
  const std::size_t mod = in.find("_MOD_", 2);
  if (mod == std::string_view::npos || mod + 5 == in.size()) return "";
  const std::string_view module = in.substr(2, mod - 2), procedure = in.substr(mod + 5);
  if (!std::all_of(module.begin(), module.end(), fortran_module_char) ||
      !std::all_of(procedure.begin(), procedure.end(), identifier_char))
    return "";
  return std::string(module) + "::" + std::string(procedure);
}

}  // namespace

std::string base_symbol_name(std::string_view symbol) {
  try {
    return std::string(symbol.substr(0, base_length(symbol)));
  } catch (...) {
    return std::string();
  }
}

std::string demangle(std::string_view mangled) {
  try {
    std::string in(mangled);
    if (std::string fortran = fortran_module_procedure(in); !fortran.empty()) return fortran;
    if (in.size() < 3 || in[0] != '_' || in[1] != 'Z') return in;
    int status = 0;
    char* out = abi::__cxa_demangle(in.c_str(), nullptr, nullptr, &status);
    if (status != 0 || out == nullptr) {
      std::free(out);
      return in;
    }
    std::string result(out);
    std::free(out);
    return result;
  } catch (...) {
    return std::string();
  }
}

// ---------------------------------------------------------------------------------------------
// Loaded objects
// ---------------------------------------------------------------------------------------------

namespace {

struct Sym {
  std::uintptr_t start;  // runtime address
  std::uint64_t size;
  std::uint32_t name;      // offset into Object::names
  std::uint32_t name_len;
  std::int32_t file_group;  // index of the preceding STT_FILE for local symbols, -1 for others
  std::uint8_t rank;        // lower = preferred among symbols at the same address
};

struct Segment {
  std::uintptr_t lo, hi;
};

// Code ranges of the concrete subprograms of one CU, sorted by low address.
struct SubRange {
  Dwarf_Addr lo, hi;
  Dwarf_Die die;
};
struct CuIndex {
  std::vector<SubRange> ranges;
  // Fortran units only: each subprogram's name inside its hosts (modules, host procedures), as
  // DWARF spells them, by DIE offset: "heat" (the main program), "heatmod::step",
  // "heatmod::step::inner" (an internal procedure). Empty for other languages.
  std::unordered_map<Dwarf_Off, std::string> fortran_names;
};

struct Object {
  std::string path;
  std::uintptr_t bias = 0;
  std::vector<Segment> segments;  // runtime ranges of the PT_LOAD segments
  dev_t dev = 0;
  ino_t ino = 0;
  bool vdso = false;

  bool symtab_loaded = false;
  bool from_dynsym = false;          // no .symtab: only exported functions are named
  std::string names;                 // '\0'-separated name pool
  std::vector<Sym> syms;             // sorted by (start, rank, name)
  std::vector<std::uint32_t> by_name;  // indices into syms sorted by name, built lazily

  bool dwfl_tried = false;
  Dwfl* dwfl = nullptr;
  Dwfl_Module* mod = nullptr;
  std::unordered_map<Dwarf_Off, CuIndex> cu_index;  // by CU DIE offset, built on first use

  Object() = default;
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;
  ~Object() {
    if (dwfl != nullptr) dwfl_end(dwfl);
  }

  bool contains(std::uintptr_t a) const {
    for (const Segment& s : segments) {
      if (a >= s.lo && a < s.hi) return true;
    }
    return false;
  }
  std::string_view name_of(const Sym& s) const {
    return std::string_view(names.data() + s.name, s.name_len);
  }
};

struct State {
  std::mutex mutex;
  std::vector<std::unique_ptr<Object>> objects;
  bool scanned = false;
  unsigned long long adds = 0, subs = 0;
  Object* last = nullptr;  // last object hit, checked first
};

State& state() {
  static State* s = new State();  // never destroyed: usable from atexit handlers/other dtors
  return *s;
}

// --- dl_iterate_phdr ---------------------------------------------------------------------------

struct Counters {
  unsigned long long adds = 0, subs = 0;
  bool valid = false;
};

int counters_cb(struct dl_phdr_info* info, size_t size, void* data) {
  auto* c = static_cast<Counters*>(data);
  if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
    c->adds = info->dlpi_adds;
    c->subs = info->dlpi_subs;
    c->valid = true;
  }
  return 1;  // the counters are the same for every object: stop after the first
}

struct ScanEntry {
  std::string path;
  std::uintptr_t bias;
  std::vector<Segment> segments;
  bool vdso;
};

struct ScanResult {
  std::vector<ScanEntry> entries;
  Counters counters;
  bool first = true;
  std::uintptr_t vdso_ehdr = 0;
};

std::string self_exe() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "/proc/self/exe";
  return std::string(buf, static_cast<std::size_t>(n));
}

int scan_cb(struct dl_phdr_info* info, size_t size, void* data) {
  auto* r = static_cast<ScanResult*>(data);
  try {
    if (r->first && size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
      r->counters.adds = info->dlpi_adds;
      r->counters.subs = info->dlpi_subs;
      r->counters.valid = true;
    }
    bool first = r->first;
    r->first = false;
    ScanEntry e;
    e.bias = info->dlpi_addr;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
      const ElfW(Phdr)& ph = info->dlpi_phdr[i];
      if (ph.p_type != PT_LOAD) continue;
      std::uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
      e.segments.push_back({lo, lo + ph.p_memsz});
    }
    if (e.segments.empty()) return 0;
    const char* name = info->dlpi_name != nullptr ? info->dlpi_name : "";
    e.vdso = std::strncmp(name, "linux-vdso", 10) == 0 || std::strncmp(name, "linux-gate", 10) == 0;
    if (r->vdso_ehdr != 0) {
      for (const Segment& s : e.segments) {
        if (r->vdso_ehdr >= s.lo && r->vdso_ehdr < s.hi) e.vdso = true;
      }
    }
    if (name[0] == '\0') {
      if (!first) return 0;  // unnamed non-main entry: nothing to open
      e.path = self_exe();
    } else {
      e.path = name;
    }
    r->entries.push_back(std::move(e));
  } catch (...) {
  }
  return 0;
}

Counters current_counters() {
  Counters c;
  dl_iterate_phdr(counters_cb, &c);
  return c;
}

// Re-reads the set of loaded objects; keeps Object instances (their tables and DWARF) for
// objects that are still loaded at the same place from the same file.
void rescan(State& st) {
  ScanResult r;
  r.vdso_ehdr = static_cast<std::uintptr_t>(getauxval(AT_SYSINFO_EHDR));
  dl_iterate_phdr(scan_cb, &r);
  std::vector<std::unique_ptr<Object>> next;
  next.reserve(r.entries.size());
  for (ScanEntry& e : r.entries) {
    struct stat sb {};
    bool have_stat = !e.vdso && ::stat(e.path.c_str(), &sb) == 0;
    std::unique_ptr<Object> keep;
    for (auto& old : st.objects) {
      if (old && old->path == e.path && old->bias == e.bias &&
          old->segments.size() == e.segments.size() && old->segments[0].lo == e.segments[0].lo &&
          (!have_stat || (old->dev == sb.st_dev && old->ino == sb.st_ino))) {
        keep = std::move(old);
        break;
      }
    }
    if (!keep) {
      keep = std::make_unique<Object>();
      keep->path = std::move(e.path);
      keep->bias = e.bias;
      keep->segments = std::move(e.segments);
      keep->vdso = e.vdso;
      if (have_stat) {
        keep->dev = sb.st_dev;
        keep->ino = sb.st_ino;
      }
    }
    next.push_back(std::move(keep));
  }
  st.objects = std::move(next);  // objects no longer loaded are destroyed here
  st.last = nullptr;
  st.scanned = true;
  if (r.counters.valid) {
    st.adds = r.counters.adds;
    st.subs = r.counters.subs;
  }
}

Object* find_object_in(State& st, std::uintptr_t a) {
  if (st.last != nullptr && st.last->contains(a)) return st.last;
  for (auto& o : st.objects) {
    if (o->contains(a)) {
      st.last = o.get();
      return o.get();
    }
  }
  return nullptr;
}

// Finds the object containing `a`, rescanning when dlopen/dlclose happened since the last scan
// or (once) when no known object contains the address.
Object* find_object(State& st, std::uintptr_t a) {
  bool rescanned = false;
  if (!st.scanned) {
    rescan(st);
    rescanned = true;
  } else {
    Counters c = current_counters();
    if (!c.valid || c.adds != st.adds || c.subs != st.subs) {
      rescan(st);
      rescanned = true;
    }
  }
  Object* o = find_object_in(st, a);
  if (o == nullptr && !rescanned) {
    rescan(st);
    o = find_object_in(st, a);
  }
  return o;
}

// --- symbol table ------------------------------------------------------------------------------

// Preference among symbols at the same address (lower first): the base name over a clone-style
// alias ("foo" over "foo.localalias"), STT_FUNC over STT_GNU_IFUNC, GLOBAL over WEAK over LOCAL,
// and a name without a leading underscore ("malloc" over "__libc_malloc").
std::uint8_t rank_of(std::string_view name, unsigned bind, unsigned type) {
  unsigned r = 0;
  if (base_length(name) != name.size()) r |= 16u;
  if (type != STT_FUNC) r |= 8u;
  if (bind == STB_WEAK) r |= 2u;
  else if (bind != STB_GLOBAL) r |= 4u;
  if (!name.empty() && name[0] == '_' && !(name.size() > 1 && name[1] == 'Z')) r |= 1u;
  return static_cast<std::uint8_t>(r);
}

void load_symtab(Object& o) {
  if (o.symtab_loaded) return;
  o.symtab_loaded = true;
  if (o.vdso) return;
  static std::once_flag elf_init;
  std::call_once(elf_init, [] { elf_version(EV_CURRENT); });
  int fd = ::open(o.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  if (elf == nullptr || elf_kind(elf) != ELF_K_ELF) {
    if (elf != nullptr) elf_end(elf);
    ::close(fd);
    return;
  }
  Elf_Scn* symtab = nullptr;
  Elf_Scn* dynsym = nullptr;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) == nullptr) continue;
    if (sh.sh_type == SHT_SYMTAB && symtab == nullptr) symtab = scn;
    if (sh.sh_type == SHT_DYNSYM && dynsym == nullptr) dynsym = scn;
  }
  Elf_Scn* scn = symtab != nullptr ? symtab : dynsym;
  o.from_dynsym = symtab == nullptr;
  GElf_Shdr sh;
  Elf_Data* data = scn != nullptr ? elf_getdata(scn, nullptr) : nullptr;
  if (data != nullptr && gelf_getshdr(scn, &sh) != nullptr && sh.sh_entsize != 0) {
    std::size_t count = sh.sh_size / sh.sh_entsize;
    std::int32_t file_group = -1;
    for (std::size_t i = 1; i < count; ++i) {
      GElf_Sym s;
      if (gelf_getsym(data, static_cast<int>(i), &s) == nullptr) continue;
      unsigned type = GELF_ST_TYPE(s.st_info);
      unsigned bind = GELF_ST_BIND(s.st_info);
      if (type == STT_FILE) {
        ++file_group;
        continue;
      }
      if (type != STT_FUNC && type != STT_GNU_IFUNC) continue;
      if (s.st_shndx == SHN_UNDEF) continue;
      const char* nm = elf_strptr(elf, sh.sh_link, s.st_name);
      if (nm == nullptr || nm[0] == '\0') continue;
      std::string_view name(nm);
      std::size_t at = name.find('@');  // "foo@@VERS" in some .symtab sections
      if (at != std::string_view::npos && at > 0) name = name.substr(0, at);
      Sym sym;
      sym.start = o.bias + static_cast<std::uintptr_t>(s.st_value);
      sym.size = s.st_size;
      sym.name = static_cast<std::uint32_t>(o.names.size());
      sym.name_len = static_cast<std::uint32_t>(name.size());
      sym.file_group = bind == STB_LOCAL ? file_group : -1;
      sym.rank = rank_of(name, bind, type);
      o.names.append(name);
      o.names.push_back('\0');
      o.syms.push_back(sym);
    }
  }
  elf_end(elf);
  ::close(fd);
  const std::string& pool = o.names;
  std::sort(o.syms.begin(), o.syms.end(), [&pool](const Sym& a, const Sym& b) {
    if (a.start != b.start) return a.start < b.start;
    if (a.rank != b.rank) return a.rank < b.rank;
    return std::string_view(pool.data() + a.name, a.name_len) <
           std::string_view(pool.data() + b.name, b.name_len);
  });
  o.syms.shrink_to_fit();
  o.names.shrink_to_fit();
}

bool covers(const Sym& s, std::uintptr_t a) {
  if (a < s.start) return false;
  if (s.size == 0) return a == s.start;
  return a - s.start < s.size;
}

// The preferred symbol covering `a`, or nullptr.
const Sym* lookup_symbol(const Object& o, std::uintptr_t a) {
  auto it = std::upper_bound(o.syms.begin(), o.syms.end(), a,
                             [](std::uintptr_t v, const Sym& s) { return v < s.start; });
  // Walk back over the symbols starting at or below `a`: first those with the greatest start
  // (in preference order), then a few earlier ones in case of nested/overlapping symbols.
  int distinct_starts = 0;
  while (it != o.syms.begin() && distinct_starts < 4) {
    auto group_end = it;
    std::uintptr_t start = std::prev(it)->start;
    auto group_begin = it;
    while (group_begin != o.syms.begin() && std::prev(group_begin)->start == start) --group_begin;
    for (auto j = group_begin; j != group_end; ++j) {
      if (covers(*j, a)) return &*j;
    }
    it = group_begin;
    ++distinct_starts;
  }
  return nullptr;
}

void build_name_index(Object& o) {
  if (!o.by_name.empty() || o.syms.empty()) return;
  o.by_name.resize(o.syms.size());
  for (std::uint32_t i = 0; i < o.syms.size(); ++i) o.by_name[i] = i;
  std::stable_sort(o.by_name.begin(), o.by_name.end(), [&o](std::uint32_t a, std::uint32_t b) {
    return o.name_of(o.syms[a]) < o.name_of(o.syms[b]);
  });
}

// The symbol named exactly `name`; among several (static functions of the same name in
// different files), the one of `file_group` if any, else the preferred one.
const Sym* find_by_name(Object& o, std::string_view name, std::int32_t file_group) {
  build_name_index(o);
  auto lo = std::lower_bound(o.by_name.begin(), o.by_name.end(), name,
                             [&o](std::uint32_t i, std::string_view n) {
                               return o.name_of(o.syms[i]) < n;
                             });
  const Sym* best = nullptr;
  for (auto it = lo; it != o.by_name.end() && o.name_of(o.syms[*it]) == name; ++it) {
    const Sym& s = o.syms[*it];
    if (file_group >= 0 && s.file_group == file_group) return &s;
    if (best == nullptr || s.rank < best->rank) best = &s;
  }
  return best;
}

// --- DWARF -------------------------------------------------------------------------------------

char* g_debuginfo_path = nullptr;  // default search path: ":.debug:/usr/lib/debug"

const Dwfl_Callbacks* dwfl_callbacks() {
  static Dwfl_Callbacks cb = [] {
    Dwfl_Callbacks c{};
    c.find_elf = dwfl_build_id_find_elf;
    c.find_debuginfo = dwfl_standard_find_debuginfo;
    c.section_address = dwfl_offline_section_address;
    c.debuginfo_path = &g_debuginfo_path;
    return c;
  }();
  return &cb;
}

bool ensure_dwfl(Object& o) {
  if (o.dwfl_tried) return o.mod != nullptr;
  o.dwfl_tried = true;
  if (o.vdso) return false;
  o.dwfl = dwfl_begin(dwfl_callbacks());
  if (o.dwfl == nullptr) return false;
  dwfl_report_begin(o.dwfl);
  std::size_t slash = o.path.rfind('/');
  std::string base = slash == std::string::npos ? o.path : o.path.substr(slash + 1);
  // add_p_vaddr: the module's bias is `bias` (dlpi_addr), so module addresses are runtime ones.
  o.mod = dwfl_report_elf(o.dwfl, base.c_str(), o.path.c_str(), -1, o.bias, true);
  dwfl_report_end(o.dwfl, nullptr, nullptr);
  if (o.mod == nullptr) {
    dwfl_end(o.dwfl);
    o.dwfl = nullptr;
  }
  return o.mod != nullptr;
}

bool is_fortran(Dwarf_Die* cu) {
  switch (dwarf_srclang(cu)) {
    case DW_LANG_Fortran77:
    case DW_LANG_Fortran90:
    case DW_LANG_Fortran95:
    case DW_LANG_Fortran03:
    case DW_LANG_Fortran08:
    case 0x2d:  // DW_LANG_Fortran18 (DWARF 6 draft)
      return true;
    default:
      return false;
  }
}

// "host::name", or `name` at the top.
std::string scoped(const std::string* scope, const char* name) {
  if (scope == nullptr || scope->empty()) return name;
  return *scope + "::" + name;
}

// Collects the code ranges of the concrete subprograms below `parent` (CU level, namespaces,
// classes, and nested functions / local classes inside functions and lexical blocks). In a
// Fortran unit (`scope` not null: the names of the hosts so far) also every subprogram's name
// inside its modules and host procedures.
void collect_subprograms(Dwarf_Die* parent, CuIndex* out, int depth, const std::string* scope) {
  Dwarf_Die child;
  if (depth > 64 || dwarf_child(parent, &child) != 0) return;
  do {
    const int tag = dwarf_tag(&child);
    switch (tag) {
      case DW_TAG_subprogram: {
        Dwarf_Addr base = 0, lo = 0, hi = 0;
        std::ptrdiff_t off = 0;
        int guard = 0;
        while ((off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0 && ++guard < 256) {
          if (hi > lo) out->ranges.push_back({lo, hi, child});
        }
        const char* name = scope != nullptr ? dwarf_diename(&child) : nullptr;
        if (name != nullptr && *name) {
          const std::string inner = scoped(scope, name);
          out->fortran_names.emplace(dwarf_dieoffset(&child), inner);
          if (dwarf_haschildren(&child) > 0) collect_subprograms(&child, out, depth + 1, &inner);
        } else if (dwarf_haschildren(&child) > 0) {
          collect_subprograms(&child, out, depth + 1, scope);
        }
        break;
      }
      case DW_TAG_module: {
        const char* name = scope != nullptr ? dwarf_diename(&child) : nullptr;
        const std::string inner = name != nullptr ? scoped(scope, name) : std::string();
        if (dwarf_haschildren(&child) > 0) collect_subprograms(&child, out, depth + 1, name != nullptr ? &inner : scope);
        break;
      }
      case DW_TAG_namespace:
      case DW_TAG_class_type:
      case DW_TAG_structure_type:
      case DW_TAG_union_type:
      case DW_TAG_lexical_block:
        if (dwarf_haschildren(&child) > 0) collect_subprograms(&child, out, depth + 1, scope);
        break;
      default:
        break;
    }
  } while (dwarf_siblingof(&child, &child) == 0);
}

// The CU's index, built on its first use.
CuIndex& index_of_cu(Object& o, Dwarf_Die* cu) {
  auto [it, fresh] = o.cu_index.try_emplace(dwarf_dieoffset(cu));
  CuIndex& index = it->second;
  if (fresh) {
    const std::string top;
    collect_subprograms(cu, &index, 0, is_fortran(cu) ? &top : nullptr);
    std::sort(index.ranges.begin(), index.ranges.end(),
              [](const SubRange& a, const SubRange& b) { return a.lo < b.lo; });
  }
  return index;
}

// A Fortran subprogram's name as its program spells it, from the unit's index: an out-of-line
// copy (DW_AT_abstract_origin) or a definition outside its declaration (DW_AT_specification)
// takes the place of the DIE it refers to. "" outside Fortran units.
std::string fortran_name(const CuIndex& index, Dwarf_Die* sub) {
  if (index.fortran_names.empty()) return "";
  Dwarf_Die die = *sub;
  for (int hops = 0; hops < 4; ++hops) {
    Dwarf_Attribute attr;
    Dwarf_Die target;
    Dwarf_Attribute* ref = dwarf_attr(&die, DW_AT_abstract_origin, &attr);
    if (ref == nullptr) ref = dwarf_attr(&die, DW_AT_specification, &attr);
    if (ref == nullptr || dwarf_formref_die(ref, &target) == nullptr) break;
    die = target;
  }
  auto it = index.fortran_names.find(dwarf_dieoffset(&die));
  if (it == index.fortran_names.end()) it = index.fortran_names.find(dwarf_dieoffset(sub));
  return it == index.fortran_names.end() ? std::string() : it->second;
}

// Innermost concrete DW_TAG_subprogram whose code contains pc, from the CU's index (built once
// per CU: dwarf_getscopes per lookup walks the whole CU and is far too slow for big CUs).
bool find_subprogram(const CuIndex& index, Dwarf_Addr pc, Dwarf_Die* out) {
  auto up = std::upper_bound(index.ranges.begin(), index.ranges.end(), pc,
                             [](Dwarf_Addr v, const SubRange& r) { return v < r.lo; });
  const SubRange* best = nullptr;
  for (int n = 0; up != index.ranges.begin() && n < 16; ++n) {
    --up;
    if (pc < up->hi && (best == nullptr || up->hi - up->lo < best->hi - best->lo)) best = &*up;
  }
  if (best == nullptr) return false;  // no DIE (e.g. a C++ thunk): the line table answers
  *out = best->die;
  return true;
}

// Greatest line-table line inside the subprogram's address ranges that belongs to `file`.
int last_line(Dwarf_Die* cu, Dwarf_Die* sub, const char* file) {
  Dwarf_Lines* lines = nullptr;
  std::size_t nlines = 0;
  if (file == nullptr || dwarf_getsrclines(cu, &lines, &nlines) != 0 || nlines == 0) return -1;
  auto addr_at = [lines](std::size_t i) {
    Dwarf_Addr a = 0;
    dwarf_lineaddr(dwarf_onesrcline(lines, i), &a);
    return a;
  };
  int best = -1;
  Dwarf_Addr base = 0, start = 0, end = 0;
  std::ptrdiff_t off = 0;
  int guard = 0;
  while ((off = dwarf_ranges(sub, off, &base, &start, &end)) > 0 && ++guard < 64) {
    // Lines are sorted by address: binary search for the first line at or after `start`.
    std::size_t lo = 0, hi = nlines;
    while (lo < hi) {
      std::size_t mid = lo + (hi - lo) / 2;
      if (addr_at(mid) < start) lo = mid + 1;
      else hi = mid;
    }
    for (std::size_t i = lo; i < nlines && i < lo + 100000; ++i) {
      Dwarf_Line* l = dwarf_onesrcline(lines, i);
      Dwarf_Addr a = 0;
      if (dwarf_lineaddr(l, &a) != 0 || a >= end) break;
      int ln = 0;
      if (dwarf_lineno(l, &ln) != 0 || ln <= 0) continue;
      const char* f = dwarf_linesrc(l, nullptr, nullptr);
      if (f != nullptr && std::strcmp(f, file) == 0 && ln > best) best = ln;
    }
  }
  return best;
}

/// `file` as an absolute, normalised path: a relative name is taken from the compilation
/// directory of its unit (DW_AT_comp_dir), as prof's GCC plugin records it, so that a function
/// gets one region whichever way it was instrumented.
std::string absolute_source(const char* file, Dwarf_Die* cu) {
  std::string f(file);
  if (!f.empty() && f[0] != '/' && cu != nullptr) {
    Dwarf_Attribute attr;
    const char* dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr));
    if (dir != nullptr && *dir) f = std::string(dir) + "/" + f;
  }
  return f.empty() ? f : std::filesystem::path(f).lexically_normal().string();
}

/// The compile unit holding runtime address `a`: through .debug_aranges, or, where the object
/// has none (clang does not emit them by default), by the CUs' own address ranges. `storage`
/// keeps the latter's DIE. nullptr when no CU covers it.
Dwarf_Die* cu_of(Object& o, std::uintptr_t a, Dwarf_Addr* bias, Dwarf_Die* storage) {
  if (Dwarf_Die* cu = dwfl_module_addrdie(o.mod, a, bias)) return cu;
  Dwarf* dw = dwfl_module_getdwarf(o.mod, bias);
  if (dw == nullptr) return nullptr;
  Dwarf_CU* unit = nullptr;
  while (dwarf_get_units(dw, unit, &unit, nullptr, nullptr, storage, nullptr) == 0)
    if (dwarf_haspc(storage, a - *bias) > 0) return storage;
  return nullptr;
}

/// The line-table position of runtime address `a` in `cu` (dwfl_module_getsrc needs aranges).
const char* line_of(Object& o, Dwarf_Die* cu, std::uintptr_t a, Dwarf_Addr bias, int* line) {
  if (Dwfl_Line* l = dwfl_module_getsrc(o.mod, a)) return dwfl_lineinfo(l, nullptr, line, nullptr, nullptr, nullptr);
  Dwarf_Line* l = cu != nullptr ? dwarf_getsrc_die(cu, a - bias) : nullptr;
  if (l == nullptr || dwarf_lineno(l, line) != 0) return nullptr;
  return dwarf_linesrc(l, nullptr, nullptr);
}

void fill_source(Object& o, std::uintptr_t a, SymbolInfo* out) {
  if (!ensure_dwfl(o)) return;
  Dwarf_Addr bias = 0;
  Dwarf_Die cu_storage;
  Dwarf_Die* cu = cu_of(o, a, &bias, &cu_storage);
  if (cu != nullptr) {
    Dwarf_Addr pc = a - bias;
    Dwarf_Die sub;
    const CuIndex& index = index_of_cu(o, cu);
    if (find_subprogram(index, pc, &sub)) {
      // Fortran: the name as the program spells it (module::procedure, the main program's own
      // name instead of MAIN__, host::internal, an external procedure without gfortran's '_').
      if (std::string name = fortran_name(index, &sub); !name.empty()) out->name = std::move(name);
      const char* file = dwarf_decl_file(&sub);  // follows abstract_origin / specification
      int line = -1;
      if (file != nullptr && dwarf_decl_line(&sub, &line) == 0 && line > 0) {
        out->file = absolute_source(file, cu);
        out->line = line;
        int last = last_line(cu, &sub, file);
        if (last >= line) out->end_line = last;
      }
    }
  }
  if (out->line < 0) {  // no declaration: the line-table position of the address
    int line = 0;
    const char* file = line_of(o, cu, a, bias, &line);
    if (file != nullptr && line > 0) {
      out->file = absolute_source(file, cu);
      out->line = line;
    }
  }
}

bool resolve_locked(State& st, std::uintptr_t a, SymbolInfo* out) {
  Object* o = find_object(st, a);
  if (o == nullptr || o->vdso) return false;
  load_symtab(*o);
  std::string symbol;
  std::uintptr_t start = 0;
  const Sym* sym = lookup_symbol(*o, a);
  if (sym != nullptr) {
    symbol.assign(o->name_of(*sym));
    start = sym->start;
  } else if (o->from_dynsym && ensure_dwfl(*o)) {
    // Stripped object: libdwfl may find a separate debug file (build-id) with a .symtab.
    GElf_Off offset = 0;
    GElf_Sym gs;
    const char* nm = dwfl_module_addrinfo(o->mod, a, &offset, &gs, nullptr, nullptr, nullptr);
    if (nm == nullptr || nm[0] == '\0') return false;
    unsigned type = GELF_ST_TYPE(gs.st_info);
    if (type != STT_FUNC && type != STT_GNU_IFUNC) return false;
    if (gs.st_size == 0 ? offset != 0 : offset >= gs.st_size) return false;
    symbol = nm;
    start = a - offset;
  } else {
    return false;
  }
  std::string base = base_symbol_name(symbol);
  std::uintptr_t entry = start;
  if (base.size() != symbol.size() && sym != nullptr) {
    const Sym* b = find_by_name(*o, base, sym->file_group);
    if (b != nullptr) entry = b->start;
  }
  SymbolInfo info;
  info.name = demangle(base);
  info.mangled = std::move(base);
  info.entry = entry;
  info.object = o->path;
  fill_source(*o, a, &info);
  *out = std::move(info);
  return true;
}

}  // namespace

bool resolve(const void* address, SymbolInfo* out) {
  if (address == nullptr || out == nullptr) return false;
  try {
    State& st = state();
    std::lock_guard<std::mutex> lock(st.mutex);
    return resolve_locked(st, reinterpret_cast<std::uintptr_t>(address), out);
  } catch (...) {
    return false;
  }
}

bool source_position(const void* address, std::string* file, int* line) {
  if (address == nullptr) return false;
  try {
    State& st = state();
    std::lock_guard<std::mutex> lock(st.mutex);
    const auto a = reinterpret_cast<std::uintptr_t>(address);
    Object* o = find_object(st, a);
    if (o == nullptr || o->vdso || !ensure_dwfl(*o)) return false;
    Dwarf_Addr bias = 0;
    Dwarf_Die cu_storage;
    Dwarf_Die* cu = cu_of(*o, a, &bias, &cu_storage);
    int n = 0;
    const char* f = line_of(*o, cu, a, bias, &n);
    if (f == nullptr || n <= 0) return false;
    *file = absolute_source(f, cu);
    *line = n;
    return true;
  } catch (...) {
    return false;
  }
}

std::uintptr_t symbol_address(const void* address_in_object, std::string_view symbol) {
  try {
    State& st = state();
    std::lock_guard<std::mutex> lock(st.mutex);
    Object* o = find_object(st, reinterpret_cast<std::uintptr_t>(address_in_object));
    if (o == nullptr || o->vdso) return 0;
    load_symtab(*o);
    const Sym* s = find_by_name(*o, symbol, -1);
    return s != nullptr ? s->start : 0;
  } catch (...) {
    return 0;
  }
}

}  // namespace prof::symbols
