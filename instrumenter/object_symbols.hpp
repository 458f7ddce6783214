// SPDX-License-Identifier: BSD-3-Clause
// The undefined symbols of a link's objects and archives, read from their ELF symbol tables.
#pragma once

#include <string>

namespace prof::wrap {

/// The first symbol whose name starts with `prefix` (e.g. "MPI_") that `path` uses but does not
/// define: `path` is an ELF relocatable object of the host's byte order, 32 or 64 bit, or an ar
/// archive of them (GNU or BSD member names; thin archives are not read). "" when there is none,
/// when the file is of another kind (a shared library, a linker script, a slim LTO object whose
/// symbols are not in its ELF symbol table) or cannot be read. Reads only the headers and the
/// symbol tables; never throws.
std::string first_undefined_symbol(const std::string& path, const std::string& prefix);

}  // namespace prof::wrap
