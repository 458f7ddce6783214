// SPDX-License-Identifier: BSD-3-Clause
// prof::symbols: address → name / mangled / file / declaration line, clones, dlopen/dlclose.
#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <link.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <iostream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "measurement/definitions/symbols.hpp"

using prof::symbols::SymbolInfo;

extern "C" {
typedef int (*symfix_fn)(int);
int symfix_exported(int);
symfix_fn symfix_get_hidden(void);
extern const int symfix_exported_line;
extern const int symfix_hidden_line;

int symclone_use_scale(int);
int symclone_use_scale_any(int, int);
int symclone_use_sum(int);
int symclone_work(int);
extern const int symclone_scale_line;
extern const int symclone_sum_line;
extern const int symclone_work_line;
}

// ----- functions under test (the test binary is built -O2 -g) --------------------------------

static const int kLocalLine = __LINE__ + 1;
__attribute__((noinline)) static int symtest_local_function(int x) { return x * 7 + 3; }

namespace symtest {
template <typename T>
struct Klass {
  T bar(T x) const;
  T k;
};
static const int kBarLine = __LINE__ + 2;
template <typename T>
__attribute__((noinline)) T Klass<T>::bar(T x) const {
  return x * k + 11;
}
template struct Klass<int>;
}  // namespace symtest

extern "C" {
static const int kCLine = __LINE__ + 1;
__attribute__((noinline)) int symtest_c_function(int x) { return x * 13 - 5; }
}

namespace {

template <typename PMF>
const void* member_address(PMF pmf) {
  static_assert(sizeof(pmf) == 2 * sizeof(void*), "Itanium ABI pointer to member function");
  const void* p = nullptr;
  std::memcpy(&p, &pmf, sizeof p);  // non-virtual: the first word is the function address
  return p;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

template <typename F>
const void* fn_address(F* f) {
  return reinterpret_cast<const void*>(f);
}

}  // namespace

// ----- pure functions ---------------------------------------------------------------------------

TEST_CASE("base_symbol_name maps GCC clones to their base", "[symbols]") {
  using prof::symbols::base_symbol_name;
  CHECK(base_symbol_name("foo") == "foo");
  CHECK(base_symbol_name("foo.cold") == "foo");
  CHECK(base_symbol_name("foo.part.0") == "foo");
  CHECK(base_symbol_name("foo.constprop.0") == "foo");
  CHECK(base_symbol_name("foo.isra.0") == "foo");
  CHECK(base_symbol_name("foo.lto_priv.0") == "foo");
  CHECK(base_symbol_name("foo.cold.12") == "foo");
  CHECK(base_symbol_name("foo.part.0.cold") == "foo");
  CHECK(base_symbol_name("foo.constprop.0.isra.0") == "foo");
  CHECK(base_symbol_name("_Z3bari.constprop.0.isra.0") == "_Z3bari");
  CHECK(base_symbol_name("_ZN2ns5Klass3barEv.part.1") == "_ZN2ns5Klass3barEv");
  CHECK(base_symbol_name("foo.localalias") == "foo");
  CHECK(base_symbol_name("_ZNK7symtest5KlassIiE3barEi") == "_ZNK7symtest5KlassIiE3barEi");
  // Not clone suffixes / degenerate input: unchanged.
  CHECK(base_symbol_name("foo.bar") == "foo.bar");
  CHECK(base_symbol_name("foo.coldish") == "foo.coldish");
  CHECK(base_symbol_name(".cold") == ".cold");
  CHECK(base_symbol_name("") == "");
  // A clone of an outlined OpenMP body keeps the outlined function's own name.
  CHECK(base_symbol_name("main._omp_fn.0.constprop.0") == "main._omp_fn.0");
}

TEST_CASE("demangle", "[symbols]") {
  using prof::symbols::demangle;
  CHECK(demangle("_ZNK2ns5KlassIiE3barEi") == "ns::Klass<int>::bar(int) const");
  CHECK(demangle("_Z3bari") == "bar(int)");
  CHECK(demangle("_ZN3foo3bazEv") == "foo::baz()");
  CHECK(demangle("main") == "main");
  CHECK(demangle("foo") == "foo");
  CHECK(demangle("_Znotvalid") == "_Znotvalid");
  CHECK(demangle("") == "");
}

TEST_CASE("demangle: gfortran's module procedures", "[symbols]") {
  using prof::symbols::demangle;
  CHECK(demangle("__heatmod_MOD_step") == "heatmod::step");
  CHECK(demangle("__heat_2d_MOD_solve_step") == "heat_2d::solve_step");
  CHECK(demangle("__pmod.psub_MOD_helper") == "pmod.psub::helper");  // a submodule's own procedure
  CHECK(demangle("__m_MOD___copy_m_Mytype") == "m::__copy_m_Mytype");  // made by gfortran
  // Not module procedures: the main program, external and internal procedures (resolve names
  // them from DWARF), C names that merely look alike.
  CHECK(demangle("MAIN__") == "MAIN__");
  CHECK(demangle("ext_") == "ext_");
  CHECK(demangle("inner.0") == "inner.0");
  CHECK(demangle("__Heat_MOD_step") == "__Heat_MOD_step");
  CHECK(demangle("__heat_MOD_") == "__heat_MOD_");
  CHECK(demangle("___MOD_step") == "___MOD_step");
  CHECK(demangle("__libc_start_main") == "__libc_start_main");
  CHECK(demangle("__x_MOD_a-b") == "__x_MOD_a-b");
  // Clones keep their Fortran base.
  using prof::symbols::base_symbol_name;
  CHECK(base_symbol_name("__heatmod_MOD_step.constprop.0") == "__heatmod_MOD_step");
  CHECK(base_symbol_name("__pmod.psub_MOD_helper.isra.0") == "__pmod.psub_MOD_helper");
  CHECK(base_symbol_name("inner.0.part.0") == "inner.0");
  CHECK(base_symbol_name("inner.0") == "inner.0");
  CHECK(base_symbol_name("MAIN__.cold") == "MAIN__");
}

// ----- the test executable ----------------------------------------------------------------------

TEST_CASE("static function in the executable", "[symbols]") {
  const void* addr = fn_address(&symtest_local_function);
  SymbolInfo info;
  REQUIRE(prof::symbols::resolve(addr, &info));
  CHECK(info.name == "symtest_local_function(int)");
  CHECK(info.mangled == "_ZL22symtest_local_functioni");
  CHECK(ends_with(info.file, "test_symbols.cpp"));
  CHECK(info.line == kLocalLine);
  CHECK((info.end_line == -1 || info.end_line >= info.line));
  CHECK(info.entry == reinterpret_cast<std::uintptr_t>(addr));
  CHECK_FALSE(info.object.empty());
  CHECK(symtest_local_function(1) == 10);
}

TEST_CASE("C function in the executable", "[symbols]") {
  const void* addr = fn_address(&symtest_c_function);
  SymbolInfo info;
  REQUIRE(prof::symbols::resolve(addr, &info));
  CHECK(info.name == "symtest_c_function");
  CHECK(info.mangled == "symtest_c_function");
  CHECK(ends_with(info.file, "test_symbols.cpp"));
  CHECK(info.line == kCLine);
  CHECK(info.entry == reinterpret_cast<std::uintptr_t>(addr));
}

TEST_CASE("template member function in a namespace", "[symbols]") {
  const void* addr = member_address(&symtest::Klass<int>::bar);
  SymbolInfo info;
  REQUIRE(prof::symbols::resolve(addr, &info));
  CHECK(info.mangled == "_ZNK7symtest5KlassIiE3barEi");
  CHECK(info.name == "symtest::Klass<int>::bar(int) const");
  CHECK(ends_with(info.file, "test_symbols.cpp"));
  CHECK(info.line == symtest::kBarLine);
  CHECK(info.entry == reinterpret_cast<std::uintptr_t>(addr));
  symtest::Klass<int> k{2};
  CHECK(k.bar(3) == 17);
}

TEST_CASE("an address inside a function resolves to that function", "[symbols]") {
  const auto* addr = static_cast<const char*>(fn_address(&symtest_c_function));
  SymbolInfo entry, inside;
  REQUIRE(prof::symbols::resolve(addr, &entry));
  REQUIRE(prof::symbols::resolve(addr + 1, &inside));
  CHECK(inside.mangled == entry.mangled);
  CHECK(inside.entry == entry.entry);
  CHECK(inside.line == entry.line);
}

TEST_CASE("addresses that are not code", "[symbols]") {
  int on_stack = 0;
  SymbolInfo info;
  CHECK_FALSE(prof::symbols::resolve(&on_stack, &info));
  CHECK_FALSE(prof::symbols::resolve(nullptr, &info));
  std::vector<int> heap(16);
  CHECK_FALSE(prof::symbols::resolve(heap.data(), &info));
  CHECK_FALSE(prof::symbols::resolve(&symfix_exported_line, &info));  // data of a known object
  CHECK_FALSE(prof::symbols::resolve(fn_address(&symtest_c_function), nullptr));
  // The vDSO has no file to read: skipped, not an error.
  if (unsigned long vdso = getauxval(AT_SYSINFO_EHDR)) {
    CHECK_FALSE(prof::symbols::resolve(reinterpret_cast<const void*>(vdso + 0x400), &info));
  }
}

TEST_CASE("a function of a system library (exported symbol)", "[symbols]") {
  // libc's own qsort: RTLD_DEFAULT would find a sanitizer's interceptor first (PROF_SANITIZE).
  void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(libc != nullptr);
  const void* addr = dlsym(libc, "qsort");
  dlclose(libc);
  REQUIRE(addr != nullptr);
  SymbolInfo info;
  REQUIRE(prof::symbols::resolve(addr, &info));
  CHECK(info.name == "qsort");
  CHECK(info.mangled == "qsort");
  CHECK(info.entry == reinterpret_cast<std::uintptr_t>(addr));
  CHECK(info.object.find("libc") != std::string::npos);
  // file/line only when the distribution's debug info is installed: not asserted.
}

// ----- the linked shared library ----------------------------------------------------------------

TEST_CASE("functions of a linked shared library", "[symbols]") {
  SECTION("exported") {
    const void* addr = dlsym(RTLD_DEFAULT, "symfix_exported");
    REQUIRE(addr != nullptr);
    SymbolInfo info;
    REQUIRE(prof::symbols::resolve(addr, &info));
    CHECK(info.name == "symfix_exported");
    CHECK(info.mangled == "symfix_exported");
    CHECK(ends_with(info.file, "libsymfix.c"));
    CHECK(info.line == symfix_exported_line);
    CHECK(info.end_line == symfix_exported_line);
    CHECK(ends_with(info.object, "libsymfix.so"));
    CHECK(info.entry == reinterpret_cast<std::uintptr_t>(addr));
  }
  SECTION("static, reached through a returned pointer") {
    const void* addr = fn_address(symfix_get_hidden());
    SymbolInfo info;
    REQUIRE(prof::symbols::resolve(addr, &info));
    CHECK(info.name == "symfix_hidden");
    CHECK(ends_with(info.file, "libsymfix.c"));
    CHECK(info.line == symfix_hidden_line);
    CHECK(info.end_line == symfix_hidden_line + 3);
    CHECK(ends_with(info.object, "libsymfix.so"));
    CHECK(symfix_get_hidden()(2) == 5);
  }
}

// ----- GCC clones (libsymclone.so, -O2 -fipa-cp-clone) -----------------------------------------

TEST_CASE("GCC clones resolve to their base function", "[symbols]") {
  const void* in_object = fn_address(&symclone_use_scale);
  CHECK(symclone_use_scale(4) + symclone_use_scale_any(3, 5) + symclone_use_sum(2) +
            symclone_work(10) != 0);

  SECTION("constprop clone with its base in the same object") {
    std::uintptr_t base = prof::symbols::symbol_address(in_object, "symclone_scale");
    std::uintptr_t clone = prof::symbols::symbol_address(in_object, "symclone_scale.constprop.0");
    INFO("nm libsymclone.so must show symclone_scale and symclone_scale.constprop.0");
    REQUIRE(base != 0);
    REQUIRE(clone != 0);
    REQUIRE(base != clone);
    SymbolInfo b, c;
    REQUIRE(prof::symbols::resolve(reinterpret_cast<const void*>(base), &b));
    REQUIRE(prof::symbols::resolve(reinterpret_cast<const void*>(clone), &c));
    CHECK(b.name == "symclone_scale");
    CHECK(c.name == "symclone_scale");
    CHECK(c.mangled == "symclone_scale");
    CHECK(b.entry == base);
    CHECK(c.entry == base);  // merged with the base function's region
    CHECK(ends_with(c.file, "libsymclone.c"));
    CHECK(c.line == symclone_scale_line);  // via DW_AT_abstract_origin
    CHECK(b.line == symclone_scale_line);
  }
  SECTION("isra clone without a base symbol") {
    CHECK(prof::symbols::symbol_address(in_object, "symclone_sum") == 0);
    std::uintptr_t clone = prof::symbols::symbol_address(in_object, "symclone_sum.isra.0");
    REQUIRE(clone != 0);
    SymbolInfo c;
    REQUIRE(prof::symbols::resolve(reinterpret_cast<const void*>(clone), &c));
    CHECK(c.name == "symclone_sum");
    CHECK(c.entry == clone);  // no base: the clone's own start
    CHECK(ends_with(c.file, "libsymclone.c"));
    CHECK(c.line == symclone_sum_line);
  }
  SECTION("cold partition") {
    std::uintptr_t cold = prof::symbols::symbol_address(in_object, "symclone_work.cold");
    REQUIRE(cold != 0);
    SymbolInfo c;
    REQUIRE(prof::symbols::resolve(reinterpret_cast<const void*>(cold), &c));
    CHECK(c.name == "symclone_work");
    CHECK(c.entry == reinterpret_cast<std::uintptr_t>(dlsym(RTLD_DEFAULT, "symclone_work")));
    CHECK(ends_with(c.file, "libsymclone.c"));
    CHECK(c.line == symclone_work_line);
  }
  SECTION("symbol_address of unknown names and objects") {
    CHECK(prof::symbols::symbol_address(in_object, "no_such_function") == 0);
    int on_stack = 0;
    CHECK(prof::symbols::symbol_address(&on_stack, "symclone_work") == 0);
  }
}

// ----- dlopen / dlclose ------------------------------------------------------------------------

TEST_CASE("Fortran procedures are named as DWARF spells them", "[symbols]") {
#ifndef SYMFORT_DLOPEN_PATH
  WARN("skipped: gfortran was not found when prof was configured (fixtures/symbols/libsymfort.F90 not built)");
#else
  void* h = dlopen(SYMFORT_DLOPEN_PATH, RTLD_NOW | RTLD_LOCAL);
  REQUIRE(h != nullptr);
  const void* anchor = dlsym(h, "symfort_anchor");
  const auto* twice_line = static_cast<const int*>(dlsym(h, "symfort_twice_line"));
  const auto* helper_line = static_cast<const int*>(dlsym(h, "symfort_helper_line"));
  auto ext_line = reinterpret_cast<int (*)()>(dlsym(h, "symfort_ext_line"));
  auto prog_line = reinterpret_cast<int (*)()>(dlsym(h, "symfort_prog_line"));
  REQUIRE(anchor != nullptr);
  REQUIRE(twice_line != nullptr);
  REQUIRE(helper_line != nullptr);
  REQUIRE(ext_line != nullptr);
  REQUIRE(prog_line != nullptr);
  // By symbol; the internal procedure's is helper.<n>, n a counter of gfortran's.
  auto address_of = [&](const std::string& symbol) {
    return reinterpret_cast<const void*>(prof::symbols::symbol_address(anchor, symbol));
  };
  const void* helper = nullptr;
  std::string helper_symbol;
  for (int n = 0; n < 10 && helper == nullptr; ++n) {
    helper_symbol = "helper." + std::to_string(n);
    helper = address_of(helper_symbol);
  }
  struct Case {
    const void* address;
    std::string name, mangled;
    int line;
  };
  const Case cases[] = {
      {address_of("__symfort_MOD_twice"), "symfort::twice", "__symfort_MOD_twice", *twice_line},
      {helper, "symfort::twice::helper", helper_symbol, *helper_line},
      {anchor, "symfort::anchor", "symfort_anchor", -1},  // bind(C, name=...): DWARF's name, the binding's symbol
      {address_of("symfort_ext_"), "symfort_ext", "symfort_ext_", ext_line()},
      {address_of("MAIN__"), "symfort_prog", "MAIN__", prog_line()},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    REQUIRE(c.address != nullptr);
    SymbolInfo info;
    REQUIRE(prof::symbols::resolve(c.address, &info));
    CHECK(info.name == c.name);
    CHECK(info.mangled == c.mangled);
    CHECK(ends_with(info.file, "fixtures/symbols/libsymfort.F90"));
    if (c.line > 0) CHECK(info.line == c.line);
    CHECK(info.entry == reinterpret_cast<std::uintptr_t>(c.address));
  }
  dlclose(h);
#endif
}

TEST_CASE("functions of a dlopen'ed library, across dlclose and re-dlopen", "[symbols]") {
  const char* path = SYMFIX_DLOPEN_PATH;
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  REQUIRE(h != nullptr);
  const void* fn = dlsym(h, "symfix_dl_function");
  auto get_static = reinterpret_cast<int (*(*)(void))(int)>(dlsym(h, "symfix_dl_get_static"));
  const auto* fn_line = static_cast<const int*>(dlsym(h, "symfix_dl_function_line"));
  const auto* static_line = static_cast<const int*>(dlsym(h, "symfix_dl_static_line"));
  REQUIRE(fn != nullptr);
  REQUIRE(get_static != nullptr);
  REQUIRE(fn_line != nullptr);
  REQUIRE(static_line != nullptr);
  const int expect_fn_line = *fn_line;
  const int expect_static_line = *static_line;

  SymbolInfo info;
  REQUIRE(prof::symbols::resolve(fn, &info));
  CHECK(info.name == "symfix_dl_function");
  CHECK(ends_with(info.file, "libsymfix_dl.c"));
  CHECK(info.line == expect_fn_line);
  CHECK(ends_with(info.object, "libsymfix_dl.so"));
  CHECK(info.entry == reinterpret_cast<std::uintptr_t>(fn));
  SymbolInfo st;
  REQUIRE(prof::symbols::resolve(fn_address(get_static()), &st));
  CHECK(st.name == "symfix_dl_static");
  CHECK(st.line == expect_static_line);

  Dl_info dli{};
  REQUIRE(dladdr(fn, &dli) != 0);
  void* old_base = dli.dli_fbase;
  REQUIRE(dlclose(h) == 0);
  const bool unloaded = dlopen(path, RTLD_NOW | RTLD_NOLOAD) == nullptr;
  // Occupy the old place so that the library comes back elsewhere (a hint, not MAP_FIXED).
  const std::size_t reserve_bytes = 4u << 20;
  void* reserve = unloaded ? mmap(old_base, reserve_bytes, PROT_NONE,
                                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
                           : MAP_FAILED;
  if (unloaded) {
    SymbolInfo gone;
    CHECK_FALSE(prof::symbols::resolve(fn, &gone));  // dlclose noticed
  }

  void* h2 = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  REQUIRE(h2 != nullptr);
  const void* fn2 = dlsym(h2, "symfix_dl_function");
  REQUIRE(fn2 != nullptr);
  INFO("first at " << fn << ", again at " << fn2 << (reserve == old_base ? " (old place reserved)" : ""));
  if (reserve == old_base) CHECK(fn2 != fn);
  SymbolInfo again;
  REQUIRE(prof::symbols::resolve(fn2, &again));
  CHECK(again.name == "symfix_dl_function");
  CHECK(again.line == expect_fn_line);
  CHECK(again.entry == reinterpret_cast<std::uintptr_t>(fn2));
  CHECK(ends_with(again.file, "libsymfix_dl.c"));
  auto get_static2 = reinterpret_cast<int (*(*)(void))(int)>(dlsym(h2, "symfix_dl_get_static"));
  REQUIRE(get_static2 != nullptr);
  SymbolInfo st2;
  REQUIRE(prof::symbols::resolve(fn_address(get_static2()), &st2));
  CHECK(st2.name == "symfix_dl_static");
  CHECK(st2.line == expect_static_line);
  if (reserve != MAP_FAILED) munmap(reserve, reserve_bytes);
  dlclose(h2);
}

// ----- many lookups, threads --------------------------------------------------------------------

namespace {

struct ExeInfo {
  std::string path;
  std::uintptr_t bias = 0;
  bool done = false;
};

int first_object(struct dl_phdr_info* info, size_t, void* data) {
  auto* e = static_cast<ExeInfo*>(data);
  e->bias = info->dlpi_addr;
  e->done = true;
  return 1;
}

// Runtime entries of every defined function symbol in the executable's .symtab.
std::vector<std::uintptr_t> executable_functions() {
  ExeInfo exe;
  dl_iterate_phdr(first_object, &exe);
  std::vector<std::uintptr_t> out;
  elf_version(EV_CURRENT);
  int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) == nullptr || sh.sh_type != SHT_SYMTAB) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    for (std::size_t i = 0; i < sh.sh_size / sh.sh_entsize; ++i) {
      GElf_Sym s;
      if (gelf_getsym(data, static_cast<int>(i), &s) == nullptr) continue;
      if (GELF_ST_TYPE(s.st_info) != STT_FUNC || s.st_shndx == SHN_UNDEF || s.st_size == 0) continue;
      out.push_back(exe.bias + s.st_value);
    }
  }
  elf_end(elf);
  close(fd);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

TEST_CASE("every function of the executable resolves; lookup speed", "[symbols][speed]") {
  std::vector<std::uintptr_t> entries = executable_functions();
  REQUIRE(entries.size() > 100);
  // Up to 10,000 distinct addresses: all entries, then addresses inside the functions.
  std::set<std::uintptr_t> distinct(entries.begin(), entries.end());
  for (std::uintptr_t off = 4; distinct.size() < 10000 && off < 64; off += 4) {
    for (std::uintptr_t e : entries) {
      if (distinct.size() >= 10000) break;
      distinct.insert(e + off);
    }
  }
  std::vector<std::uintptr_t> addrs(distinct.begin(), distinct.end());
  std::reverse(addrs.begin(), addrs.end());  // not in address order
  std::set<std::uintptr_t> entry_set(entries.begin(), entries.end());
  std::size_t resolved_entries = 0, resolved = 0, with_line = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (std::uintptr_t a : addrs) {
    SymbolInfo info;
    if (prof::symbols::resolve(reinterpret_cast<const void*>(a), &info)) {
      ++resolved;
      if (entry_set.count(a) != 0) ++resolved_entries;
      if (info.line > 0) ++with_line;
    }
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "[symbols] " << addrs.size() << " distinct lookups (" << entries.size()
            << " function entries) in " << secs << " s; resolved " << resolved << ", with line "
            << with_line << "\n";
  CHECK(resolved_entries == entries.size());
  CHECK(secs < 5.0);  // well under a second expected; loose bound against slow CI machines
}

TEST_CASE("concurrent resolution", "[symbols]") {
  std::vector<std::uintptr_t> entries = executable_functions();
  REQUIRE_FALSE(entries.empty());
  std::atomic<std::size_t> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&entries, &failures, t] {
      for (std::size_t i = static_cast<std::size_t>(t); i < entries.size(); i += 3) {
        SymbolInfo info;
        if (!prof::symbols::resolve(reinterpret_cast<const void*>(entries[i]), &info) ||
            info.mangled.empty())
          failures.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(failures.load() == 0);
}
