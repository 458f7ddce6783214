// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target for the OTF2 reader of prof-export and prof-report (tools/otf2_reader): the
// input replaces one file of a small valid archive.
//
// OTF2 reads a directory (anchor, global definitions, one .def and .evt per location), so the
// archive tests/e2e/export/data/cuda_streams (4 locations: a thread and 3 CUDA streams, the CUDA
// correlation attribute) is copied once into a temporary directory; the input's first byte picks
// one of its files, the next three a flag (cut the file) and an offset, the rest overwrites the
// intact file there (Archive::put), so that small inputs are small damages. Checks beyond "no crash, no undefined behaviour": a failure gives one
// non-empty line, and every Enter/Leave the reader passes on names a defined region (and every
// sample a defined calling context), as prof-export indexes its tables by them; the process
// and rank maps of prof's tools are built from the definitions.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "tools/otf2_reader.hpp"

#ifndef PROF_FUZZ_OTF2_ARCHIVE
#error "PROF_FUZZ_OTF2_ARCHIVE: the directory of the archive to damage"
#endif

namespace {

namespace otf2 = prof::otf2;

[[noreturn]] void violated(const char* what, std::string_view detail) {
  std::fprintf(stderr, "fuzz_otf2: %s: %.*s\n", what, static_cast<int>(std::min<std::size_t>(detail.size(), 300)), detail.data());
  std::abort();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) violated("cannot read the archive", path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_file(const std::string& path, const char* data, std::size_t size) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || (size && std::fwrite(data, 1, size, f) != size) || std::fclose(f) != 0) violated("cannot write", path);
}

// The archive's files (relative names) and their intact content, copied into a temporary directory.
struct Archive {
  std::string dir;
  std::vector<std::string> names, contents;
  std::size_t damaged = 0;  // the file the last input replaced

  Archive() {
    const std::string src = PROF_FUZZ_OTF2_ARCHIVE;
    names = {"traces.otf2", "traces.def"};
    if (DIR* d = ::opendir((src + "/traces").c_str())) {
      std::vector<std::string> local;
      while (const dirent* e = ::readdir(d))
        if (e->d_name[0] != '.') local.push_back(std::string("traces/") + e->d_name);
      ::closedir(d);
      std::sort(local.begin(), local.end());
      names.insert(names.end(), local.begin(), local.end());
    }
    if (names.size() < 4) violated("the archive has no location files", src);
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/fuzz_otf2.XXXXXX";
    if (!::mkdtemp(pattern.data())) violated("mkdtemp", pattern);
    dir = pattern;
    if (::mkdir((dir + "/traces").c_str(), 0700) != 0) violated("mkdir", dir);
    for (const std::string& n : names) {
      contents.push_back(read_file(src + "/" + n));
      write_file(dir + "/" + n, contents.back().data(), contents.back().size());
    }
  }
  ~Archive() {
    for (const std::string& n : names) ::unlink((dir + "/" + n).c_str());
    ::rmdir((dir + "/traces").c_str());
    ::rmdir(dir.c_str());
  }
  // The input's damage to one file: [file][flags][offset: 2 bytes, little-endian][bytes...]: the
  // bytes overwrite the intact file from the offset (modulo its size + 1); flags bit 0 cuts the
  // file after them.
  void put(const std::uint8_t* data, std::size_t size) {
    const std::size_t file = data[0] % names.size();
    if (damaged != file) write_file(dir + "/" + names[damaged], contents[damaged].data(), contents[damaged].size());
    damaged = file;
    std::string c = contents[file];
    const bool cut = size > 1 && (data[1] & 1);
    const std::size_t at = size > 3 ? (data[2] | data[3] << 8) % (c.size() + 1) : 0;
    const std::size_t n = size > 4 ? size - 4 : 0;
    if (c.size() < at + n) c.resize(at + n);
    if (n) std::copy(data + 4, data + size, c.begin() + static_cast<std::ptrdiff_t>(at));
    if (cut) c.resize(at + n);
    write_file(dir + "/" + names[file], c.data(), c.size());
  }
};

void check_message(const std::string& m, const char* what) {
  if (m.empty() || m.find_first_of("\n\r") != std::string::npos) violated(what, m);
  if (m.find("[OTF2]") != std::string::npos) violated("OTF2's own line in a message", m);
}

// Indexes by region as prof-export does (a table sized by the largest defined reference).
class Sink : public otf2::EventSink {
 public:
  explicit Sink(const otf2::Definitions& defs) : defs_(defs), seen_(defs.region_defined.size(), 0) {}
  void enter(std::uint64_t, std::uint64_t, std::uint32_t r) override { region(r); }
  void leave(std::uint64_t, std::uint64_t, std::uint32_t r) override { region(r); }
  void sample(std::uint64_t, std::uint64_t, std::uint32_t cc) override {
    if (!defs_.calling_contexts.count(cc)) violated("a sample of an undefined calling context", std::to_string(cc));
  }
  std::uint64_t events = 0;

 private:
  void region(std::uint32_t r) {
    if (!defs_.regions.count(r)) violated("an event of an undefined region", std::to_string(r));
    ++seen_.at(r);  // in range: region_defined covers every defined region
    ++events;
  }
  const otf2::Definitions& defs_;
  std::vector<std::uint32_t> seen_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Archive archive;
  if (size == 0) return 0;
  archive.put(data, size);
  otf2::Reader reader;
  if (!reader.open(archive.dir + "/traces.otf2")) {
    check_message(reader.error(), "bad error message from open()");
    return 0;
  }
  const otf2::Definitions& defs = reader.defs();
  const otf2::ProcessMap processes(defs);
  otf2::MpiRanks ranks(defs);
  for (const otf2::Location& l : defs.locations) {
    std::uint32_t p = 0;
    if (processes.process_of(l, &p) && p >= processes.size()) violated("process index out of range", l.name);
    (void)otf2::ProcessMap::kind(l);
    (void)defs.host_of(l.group);
    (void)ranks.rank_in(0, ranks.world_rank(l.ref));
  }
  Sink sink(defs);
  if (!reader.read_events(sink)) check_message(reader.error(), "bad error message from read_events()");
  for (const std::string& w : reader.warnings()) check_message(w, "bad warning");
  return 0;
}

// OTF2's own allocations on its error paths are not prof's to fix; leaks of the reader are
// still found (it is compiled into this target).
extern "C" const char* __lsan_default_suppressions() { return "leak:libopen-trace-format2\n"; }

// OTF2 allocates what counts in a damaged file say (OTF2_AnchorFile_Load: 17 GB for a damaged
// anchor; a group's member count): such an allocation fails (NULL, which OTF2 reports as an error)
// as it can on a real system, instead of tripping libFuzzer's malloc limit in OTF2's own code.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1:max_allocation_size_mb=1024"; }
