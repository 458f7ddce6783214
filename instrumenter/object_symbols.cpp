// SPDX-License-Identifier: BSD-3-Clause
// The undefined symbols of a link's objects and archives, read from their ELF symbol tables.
#include "object_symbols.hpp"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace prof::wrap {

namespace {

/// An open file read at offsets; closed with the object.
struct File {
  int fd = -1;
  explicit File(const std::string& path) : fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {}
  ~File() {
    if (fd >= 0) ::close(fd);
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  bool read(std::uint64_t offset, void* to, std::size_t bytes) const {
    auto* p = static_cast<char*>(to);
    while (bytes > 0) {
      const ssize_t n = ::pread(fd, p, bytes, static_cast<off_t>(offset));
      if (n <= 0) return false;
      p += n;
      offset += static_cast<std::uint64_t>(n);
      bytes -= static_cast<std::size_t>(n);
    }
    return true;
  }
};

// Symbol tables larger than this are not read (no object has one; a corrupt header might claim it).
constexpr std::uint64_t kMaxTableBytes = 1ull << 30;

template <class Ehdr, class Shdr, class Sym>
std::string undefined_in_elf(const File& f, std::uint64_t base, std::uint64_t size, const std::string& prefix) {
  Ehdr eh;
  if (size < sizeof eh || !f.read(base, &eh, sizeof eh)) return "";
  if (eh.e_type != ET_REL || eh.e_shentsize != sizeof(Shdr) || eh.e_shnum == 0) return "";
  std::vector<Shdr> sections(eh.e_shnum);
  if (eh.e_shoff + sections.size() * sizeof(Shdr) > size ||
      !f.read(base + eh.e_shoff, sections.data(), sections.size() * sizeof(Shdr)))
    return "";
  for (const Shdr& sh : sections) {
    if (sh.sh_type != SHT_SYMTAB || sh.sh_link >= sections.size() || sh.sh_entsize != sizeof(Sym)) continue;
    const Shdr& strtab = sections[sh.sh_link];
    if (sh.sh_size > kMaxTableBytes || strtab.sh_size > kMaxTableBytes || sh.sh_offset + sh.sh_size > size ||
        strtab.sh_offset + strtab.sh_size > size)
      return "";
    std::vector<Sym> syms(sh.sh_size / sizeof(Sym));
    std::vector<char> names(strtab.sh_size + 1, '\0');
    if (!f.read(base + sh.sh_offset, syms.data(), syms.size() * sizeof(Sym)) ||
        !f.read(base + strtab.sh_offset, names.data(), strtab.sh_size))
      return "";
    for (const Sym& s : syms) {
      if (s.st_shndx != SHN_UNDEF || s.st_name == 0 || s.st_name >= strtab.sh_size) continue;
      const char* name = names.data() + s.st_name;
      if (std::strncmp(name, prefix.c_str(), prefix.size()) == 0) return name;
    }
  }
  return "";
}

/// One ELF object at `base` (a file or an archive member of `size` bytes).
std::string undefined_in_member(const File& f, std::uint64_t base, std::uint64_t size, const std::string& prefix) {
  unsigned char ident[EI_NIDENT];
  if (size < EI_NIDENT || !f.read(base, ident, sizeof ident) || std::memcmp(ident, ELFMAG, SELFMAG) != 0) return "";
  const std::uint16_t one = 1;
  const bool little = *reinterpret_cast<const unsigned char*>(&one) == 1;
  if (ident[EI_DATA] != (little ? ELFDATA2LSB : ELFDATA2MSB)) return "";
  if (ident[EI_CLASS] == ELFCLASS64) return undefined_in_elf<Elf64_Ehdr, Elf64_Shdr, Elf64_Sym>(f, base, size, prefix);
  if (ident[EI_CLASS] == ELFCLASS32) return undefined_in_elf<Elf32_Ehdr, Elf32_Shdr, Elf32_Sym>(f, base, size, prefix);
  return "";
}

}  // namespace

std::string first_undefined_symbol(const std::string& path, const std::string& prefix) {
  File f(path);
  if (f.fd < 0) return "";
  const off_t end = ::lseek(f.fd, 0, SEEK_END);
  if (end <= 0) return "";
  const auto size = static_cast<std::uint64_t>(end);
  char magic[8];
  if (size < sizeof magic || !f.read(0, magic, sizeof magic)) return "";
  if (std::memcmp(magic, "!<arch>\n", 8) != 0) return undefined_in_member(f, 0, size, prefix);
  // An ar archive: 60-byte member headers, each member padded to an even size.
  for (std::uint64_t at = 8; at + 60 <= size;) {
    char header[60];
    if (!f.read(at, header, sizeof header)) return "";
    const std::string size_field(header + 48, 10);
    std::uint64_t member = std::strtoull(size_field.c_str(), nullptr, 10);
    std::uint64_t data = at + 60;
    if (data + member > size) return "";
    // BSD names ("#1/<length>") precede the member's data.
    if (std::memcmp(header, "#1/", 3) == 0) {
      const std::uint64_t name_bytes = std::strtoull(std::string(header + 3, 13).c_str(), nullptr, 10);
      if (name_bytes > member) return "";
      data += name_bytes;
      member -= name_bytes;
    }
    // The symbol index ("/", "/SYM64/", "__.SYMDEF") and the long-name table ("//") are no ELF.
    std::string found = undefined_in_member(f, data, member, prefix);
    if (!found.empty()) return found;
    at = data + member + ((data + member) & 1);
  }
  return "";
}

}  // namespace prof::wrap
