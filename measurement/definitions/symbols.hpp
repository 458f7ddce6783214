// SPDX-License-Identifier: BSD-3-Clause
// Code address → function name, mangled name, source file and declaration line, for the
// executable and every loaded shared object (PIE/ASLR, static functions, GCC clones).
// Symbol names come from the ELF symbol table (.symtab, falling back to .dynsym), file/line
// from DWARF through libdw. Off the hot path: callers cache per address.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace prof::symbols {

struct SymbolInfo {
  std::string name;          // demangled, e.g. "ns::Klass<int>::bar(int) const", or "foo" for C;
                             // Fortran as DWARF spells it (see resolve)
  std::string mangled;       // e.g. "_ZNK2ns5KlassIiE3barEi"; equal to name for C functions
  std::string file;          // absolute or as recorded in DWARF; "" if unknown
  int line = -1;             // declaration line of the function; -1 if unknown
  int end_line = -1;         // last line if known, else -1
  std::uintptr_t entry = 0;  // runtime address of the BASE function's entry (see clones below)
  std::string object;        // path of the ELF object (executable or .so)
};

/// Resolves a code address (normally a function entry passed to the hooks). Thread-safe
/// (one internal mutex), allocates, never throws. Returns false when no symbol covers it.
/// Notices dlopen/dlclose: compares dl_iterate_phdr's dlpi_adds/dlpi_subs counters with the
/// values seen at the last scan and rescans the set of loaded objects when they changed.
/// GCC clones ("foo.constprop.0", "foo.cold", ...) are reported as their base function: name and
/// mangled of "foo", entry = address of "foo" when that symbol exists in the same object (else
/// the clone's own start); file/line from the DWARF of the clone (its abstract origin).
/// Functions of Fortran compile units are named as DWARF spells them, inside their modules and
/// host procedures: "heatmod::step" (symbol __heatmod_MOD_step), "heat" for `program heat`
/// (MAIN__), "heatmod::step::inner" for a procedure contained in step (inner.0), "ext" for an
/// external procedure (ext_); mangled keeps the symbol. Without DWARF, demangle's name.
bool resolve(const void* address, SymbolInfo* out);

/// The source position of a code address from the line table (a call's return address minus
/// one gives the line of the call): file (absolute where DWARF has the directory) and line.
/// False without line information. Thread-safe, allocates, never throws.
bool source_position(const void* address, std::string* file, int* line);

/// Maps a GCC clone symbol to its base: "foo.cold" "foo.part.0" "foo.constprop.0"
/// "foo.isra.0" "_Z3bari.constprop.0.isra.0" "foo.lto_priv.0" → "foo" / "_Z3bari". Pure function.
std::string base_symbol_name(std::string_view symbol);

/// Demangles an Itanium C++ name (abi::__cxa_demangle) and gfortran's name of a module
/// procedure ("__heatmod_MOD_step" -> "heatmod::step"); returns the input for C names and other
/// Fortran symbols (MAIN__, ext_, inner.0: resolve names them from DWARF). Pure function.
std::string demangle(std::string_view mangled);

/// Runtime address of the function symbol named exactly `symbol` (e.g. "foo.constprop.0") in
/// the loaded object that contains `address_in_object`; 0 when there is none. Uses the same
/// per-object symbol table as resolve(). For tests and tools. Thread-safe, never throws.
std::uintptr_t symbol_address(const void* address_in_object, std::string_view symbol);

}  // namespace prof::symbols
