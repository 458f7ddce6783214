// SPDX-License-Identifier: BSD-3-Clause
// Unit tests of the CUBE4 reader: profiles written by cube4::write are read back field by
// field; the values are compared with the independent cubex_check.py --dump; the self-test
// profiles of shared/tools/selftest/make_cubex.py (two processes, parameters, ids not in
// depth-first order, big-endian and DENSE variants, broken variants) are read; hand-made
// archives cover DENSE indices, several roots, byte-swapped data, tar extension headers and
// CubeW's padding; malformed files give one-line errors and never crash.
#include <catch2/catch.hpp>

#include "tests/unit/test_support.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tools/cube4_reader.hpp"
#include "measurement/profiling/cube4_writer.hpp"

#ifndef PROF_SHARED_TOOLS
#define PROF_SHARED_TOOLS "/work/shared/tools"
#endif

namespace cube4 = prof::cube4;

namespace {

struct TempDir : prof_test::TempDir {
  TempDir() : prof_test::TempDir("prof_test_cube4_reader_") {}
  std::string file(const std::string& name) const { return path + "/" + name; }
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void spit(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  REQUIRE(out.good());
}

std::string shell_quote(const std::string& s) {
  std::string r = "'";
  for (char c : s) r += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return r + "'";
}

// ---------------------------------------------------------------------------------------------
// A tiny ustar writer and reader, independent of the code under test
// ---------------------------------------------------------------------------------------------

struct TarMember {
  std::string name, content;
  char type = '0';
  long long header_size = -1;  // the size field when not content.size() (a pax size= follows)
};

/// One pax extended-header record "<length> <key>=<value>\n"; the length counts itself.
std::string pax_record(const std::string& key, const std::string& value) {
  const std::size_t rest = key.size() + value.size() + 3;
  std::size_t len = rest + 1;
  while (std::to_string(len).size() + rest != len) ++len;
  return std::to_string(len) + " " + key + "=" + value + "\n";
}

void octal_field(char* f, std::size_t width, unsigned long long v) {
  std::snprintf(f, width, "%0*llo", static_cast<int>(width - 1), v);
}

std::string tar_header(const TarMember& m) {
  char h[512] = {};
  std::memcpy(h, m.name.data(), std::min<std::size_t>(m.name.size(), 100));
  octal_field(h + 100, 8, 0600);
  octal_field(h + 108, 8, 0);
  octal_field(h + 116, 8, 0);
  octal_field(
      h + 124, 12,
      m.header_size >= 0 ? static_cast<unsigned long long>(m.header_size) : m.content.size());
  octal_field(h + 136, 12, 0);
  h[156] = m.type;
  std::memcpy(h + 257, "ustar", 6);
  std::memcpy(h + 263, "00", 2);
  std::memset(h + 148, ' ', 8);
  unsigned sum = 0;
  for (unsigned char c : h) sum += c;
  std::snprintf(h + 148, 8, "%06o", sum);
  h[155] = ' ';
  return std::string(h, sizeof h);
}

/// An uncompressed ustar archive. `cubew_padding`: pad like CubeW, 1..512 bytes after every
/// member (a whole zero block after one of k*512 bytes, §2 of CUBE4-FORMAT.md).
std::string ustar(const std::vector<TarMember>& members, bool cubew_padding = false) {
  std::string out;
  for (const TarMember& m : members) {
    out += tar_header(m);
    out += m.content;
    const std::size_t n = m.content.size();
    out.append(cubew_padding ? (n / 512 + 1) * 512 - n : (512 - n % 512) % 512, '\0');
  }
  out.append(1024, '\0');
  return out;
}

/// The members of an archive written by cube4::write (standard padding, plain headers).
std::vector<TarMember> untar(const std::string& archive) {
  std::vector<TarMember> out;
  std::size_t pos = 0;
  while (pos + 512 <= archive.size() && archive[pos] != '\0') {
    const char* h = archive.data() + pos;
    const std::string name(h, ::strnlen(h, 100));
    const std::size_t size = std::strtoull(std::string(h + 124, 12).c_str(), nullptr, 8);
    out.push_back({name, archive.substr(pos + 512, size)});
    pos += 512 + (size + 511) / 512 * 512;
  }
  return out;
}

TarMember& member(std::vector<TarMember>& ms, const std::string& name) {
  const auto it =
      std::find_if(ms.begin(), ms.end(), [&](const TarMember& m) { return m.name == name; });
  INFO("member " << name);
  REQUIRE(it != ms.end());
  return *it;
}

void remove_member(std::vector<TarMember>& ms, const std::string& name) {
  const auto n = ms.size();
  ms.erase(std::remove_if(ms.begin(), ms.end(), [&](const TarMember& m) { return m.name == name; }),
           ms.end());
  REQUIRE(ms.size() == n - 1);
}

/// Replaces the only occurrence of `from` in `s`.
void replace_once(std::string& s, const std::string& from, const std::string& to) {
  const std::size_t at = s.find(from);
  REQUIRE(at != std::string::npos);
  REQUIRE(s.find(from, at + 1) == std::string::npos);
  s.replace(at, from.size(), to);
}

// Binary .index/.data content (§4.2, §4.3) in either byte order.
void put(std::string& s, std::uint64_t bits, std::size_t size, bool big_endian) {
  for (std::size_t i = 0; i < size; ++i) {
    const std::size_t shift = 8 * (big_endian ? size - 1 - i : i);
    s += static_cast<char>((bits >> shift) & 0xFF);
  }
}

std::string index_header(bool big_endian, int format) {
  std::string s = "CUBEX.INDEX";
  put(s, 1, 4, big_endian);
  put(s, 0, 2, big_endian);
  s += static_cast<char>(format);
  return s;
}

std::string sparse_index(const std::vector<std::uint32_t>& rows, bool big_endian) {
  std::string s = index_header(big_endian, 1);
  put(s, rows.size(), 4, big_endian);
  for (std::uint32_t r : rows) put(s, r, 4, big_endian);
  return s;
}

std::string dense_index(bool big_endian) { return index_header(big_endian, 3); }

std::string doubles(const std::vector<double>& v, bool big_endian) {
  std::string s = "CUBEX.DATA";
  for (double d : v) {
    std::uint64_t bits;
    std::memcpy(&bits, &d, 8);
    put(s, bits, 8, big_endian);
  }
  return s;
}

std::string integers(const std::vector<std::int64_t>& v, std::size_t size, bool big_endian) {
  std::string s = "CUBEX.DATA";
  for (std::int64_t x : v) put(s, static_cast<std::uint64_t>(x), size, big_endian);
  return s;
}

/// The same member with every `width`-byte value after the `skip`-byte marker byte-swapped.
std::string swap_words(const std::string& s, std::size_t skip, std::size_t width) {
  std::string out = s;
  REQUIRE((s.size() - skip) % width == 0);
  for (std::size_t i = skip; i < s.size(); i += width)
    for (std::size_t k = 0; k < width; ++k) out[i + k] = s[i + width - 1 - k];
  return out;
}

// ---------------------------------------------------------------------------------------------
// Synthetic profiles for cube4::write (as in test_cube4_writer.cpp)
// ---------------------------------------------------------------------------------------------

/// A consistent profile from visits and exclusive ("self") times: inclusive time = self +
/// children, min_time = incl/visits/2, max_time = incl (0 where visits == 0).
struct Builder {
  cube4::Profile p;
  std::vector<double> self;

  std::uint32_t region(const std::string& name, const std::string& file = "", int b = -1,
                       int e = -1, const std::string& paradigm = "compiler",
                       const std::string& role = "function") {
    cube4::Region r;
    r.name = name;
    r.canonical = name;
    r.file = file;
    r.begin_line = b;
    r.end_line = e;
    r.paradigm = paradigm;
    r.role = role;
    p.regions.push_back(r);
    return static_cast<std::uint32_t>(p.regions.size() - 1);
  }
  std::size_t cnode(std::uint32_t region, std::int64_t parent) {
    p.cnodes.push_back({region, parent});
    return p.cnodes.size() - 1;
  }
  void locations(std::vector<std::string> names) {
    p.locations = std::move(names);
    p.visits.assign(p.cnodes.size() * p.locations.size(), 0);
    self.assign(p.cnodes.size() * p.locations.size(), 0.0);
  }
  std::size_t at(std::size_t c, std::size_t l) const { return c * p.locations.size() + l; }
  void set(std::size_t c, std::size_t l, std::uint64_t visits, double self_time) {
    p.visits[at(c, l)] = visits;
    self[at(c, l)] = self_time;
  }
  void finish() {
    const std::size_t nl = p.locations.size();
    p.time_incl = self;
    for (std::size_t c = p.cnodes.size(); c-- > 1;)
      for (std::size_t l = 0; l < nl; ++l)
        p.time_incl[at(static_cast<std::size_t>(p.cnodes[c].parent), l)] += p.time_incl[at(c, l)];
    p.min_time.assign(p.time_incl.size(), 0.0);
    p.max_time.assign(p.time_incl.size(), 0.0);
    for (std::size_t i = 0; i < p.time_incl.size(); ++i)
      if (p.visits[i] > 0) {
        p.min_time[i] = p.time_incl[i] / static_cast<double>(p.visits[i]) / 2;
        p.max_time[i] = p.time_incl[i];
      }
  }
};

/// main → {foo → {baz, qux}, bar → {quux}}, ids level by level (so the deep order, the wide
/// order and the id order all differ). Returns the ids of {main, foo, bar, baz, qux, quux}.
std::vector<std::size_t> three_level_tree(Builder& b) {
  const auto main_r = b.region("main", "main.c", 5, 40, "user", "function");
  const auto foo = b.region("foo", "foo.c", 7, 9), bar = b.region("bar"), baz = b.region("baz");
  const auto qux = b.region("qux"), quux = b.region("quux", "", -1, -1, "pthread", "wrapper");
  const std::size_t m = b.cnode(main_r, -1);
  const std::size_t f = b.cnode(foo, static_cast<std::int64_t>(m));
  const std::size_t r = b.cnode(bar, static_cast<std::int64_t>(m));
  const std::size_t z = b.cnode(baz, static_cast<std::int64_t>(f));
  const std::size_t q = b.cnode(qux, static_cast<std::int64_t>(f));
  const std::size_t u = b.cnode(quux, static_cast<std::int64_t>(r));
  return {m, f, r, z, q, u};
}

/// Three locations; thread 1 never enters main or bar/quux, thread 2 only foo/qux.
Builder three_locations() {
  Builder b;
  const auto ids = three_level_tree(b);
  const std::size_t m = ids[0], f = ids[1], r = ids[2], z = ids[3], q = ids[4], u = ids[5];
  b.locations({"Master thread", "Pthread thread 1", "Pthread thread 2"});
  b.set(m, 0, 1, 0.5);
  b.set(f, 0, 2, 1.0);
  b.set(r, 0, 1, 0.25);
  b.set(z, 0, 4, 0.125);
  b.set(q, 0, 8, 0.1);
  b.set(u, 0, 16, 3.0);
  b.set(f, 1, 5, 0.375);
  b.set(z, 1, 6, 0.625);
  b.set(q, 1, 7, 1.25);
  b.set(f, 2, 1, 0.0078125);
  b.set(q, 2, 9, 1.0 / 3);
  b.finish();
  return b;
}

cube4::ExtraMetric extra(const std::string& uniq, std::size_t cells) {
  cube4::ExtraMetric m;
  m.uniq_name = uniq;
  m.descr = uniq + " description";
  m.values.assign(cells, 0);
  return m;
}

std::string write_profile(const TempDir& dir, const cube4::Profile& p,
                          const std::string& name = "profile.cubex") {
  const std::string path = dir.file(name);
  std::string err;
  REQUIRE(cube4::write(path, p, &err));
  return path;
}

cube4::ReadProfile read_ok(const std::string& path) {
  cube4::ReadProfile r;
  std::string err;
  const bool ok = cube4::read(path, &r, &err);
  INFO(err);
  REQUIRE(ok);
  CHECK(err.empty());
  return r;
}

/// Exclusive time from inclusive time: incl − Σ incl(children), computed here independently.
std::vector<double> exclusive_of(const cube4::Profile& p, const std::vector<double>& incl) {
  const std::size_t nl = p.locations.size();
  std::vector<double> children_sum(incl.size(), 0.0);
  for (std::size_t c = 1; c < p.cnodes.size(); ++c)
    for (std::size_t l = 0; l < nl; ++l)
      children_sum[static_cast<std::size_t>(p.cnodes[c].parent) * nl + l] += incl[c * nl + l];
  std::vector<double> out(incl.size());
  for (std::size_t i = 0; i < incl.size(); ++i) out[i] = incl[i] - children_sum[i];
  return out;
}

/// Everything written is read back: regions, cnodes, locations, all metric values.
void require_round_trip(const Builder& b, const cube4::ReadProfile& r) {
  const cube4::Profile& p = b.p;
  const std::size_t nl = p.locations.size(), n = p.cnodes.size();

  REQUIRE(r.regions.size() == p.regions.size());
  for (std::size_t i = 0; i < p.regions.size(); ++i) {
    INFO("region " << i);
    const cube4::Region &w = p.regions[i], &g = r.regions[i];
    CHECK(g.name == w.name);
    CHECK(g.canonical == (w.canonical.empty() ? w.name : w.canonical));
    CHECK(g.file == w.file);
    CHECK(g.begin_line == w.begin_line);
    CHECK(g.end_line == w.end_line);
    CHECK(g.paradigm == (w.paradigm.empty() ? "unknown" : w.paradigm));
    CHECK(g.role == (w.role.empty() ? "unknown" : w.role));
  }
  REQUIRE(r.cnodes.size() == n);
  for (std::size_t c = 0; c < n; ++c) {
    INFO("cnode " << c);
    CHECK(r.cnodes[c].region == p.cnodes[c].region);
    CHECK(r.cnodes[c].parent == p.cnodes[c].parent);
  }
  CHECK(r.groups == 1);
  REQUIRE(r.location_groups.size() == 1);
  CHECK(r.location_groups[0].name == p.process);
  CHECK(r.location_groups[0].rank == p.rank);
  CHECK(r.location_groups[0].type == "process");
  CHECK(r.location_groups[0].creator_name.empty());
  CHECK(r.location_groups[0].creator == -1);
  CHECK(r.location_groups[0].process == 0);
  REQUIRE(r.locations.size() == nl);
  for (std::size_t l = 0; l < nl; ++l) {
    INFO("location " << l);
    CHECK(r.locations[l].name == p.locations[l]);
    CHECK(r.locations[l].type == "thread");
    CHECK_FALSE(r.locations[l].gpu());
    CHECK(r.locations[l].rank == p.rank);
    CHECK(r.locations[l].group == p.process);
    CHECK(r.locations[l].group_index == 0);
  }

  REQUIRE(r.metrics.size() == 4 + p.extra_metrics.size());
  struct Want {
    const char *uniq, *disp, *dtype, *uom, *kind;
  };
  const Want standard[4] = {
      {"visits", "Visits", "UINT64", "occ", "EXCLUSIVE"},
      {"time", "Time", "DOUBLE", "sec", "INCLUSIVE"},
      {"min_time", "Minimum Inclusive Time", "MINDOUBLE", "sec", "EXCLUSIVE"},
      {"max_time", "Maximum Inclusive Time", "MAXDOUBLE", "sec", "EXCLUSIVE"}};
  for (std::size_t k = 0; k < 4; ++k) {
    INFO("metric " << k);
    const cube4::ReadMetric& m = r.metrics[k];
    CHECK(m.uniq_name == standard[k].uniq);
    CHECK(m.disp_name == standard[k].disp);
    CHECK(m.dtype == standard[k].dtype);
    CHECK(m.uom == standard[k].uom);
    CHECK(m.kind == standard[k].kind);
    CHECK(m.has_data);
    REQUIRE(m.values.size() == n * nl);
    CHECK(r.metric(standard[k].uniq) == &m);
  }
  const cube4::ReadMetric& visits = r.metrics[0];
  const cube4::ReadMetric& time = r.metrics[1];
  for (std::size_t i = 0; i < n * nl; ++i) {
    INFO("cnode " << i / nl << " location " << i % nl);
    CHECK(visits.values[i] == static_cast<double>(p.visits[i]));
    CHECK(time.values[i] == Approx(p.time_incl[i]).epsilon(1e-12));
    CHECK(r.metrics[2].values[i] == p.min_time[i]);
    CHECK(r.metrics[3].values[i] == p.max_time[i]);
  }
  for (std::size_t k = 0; k < p.extra_metrics.size(); ++k) {
    const cube4::ExtraMetric& w = p.extra_metrics[k];
    const cube4::ReadMetric& m = r.metrics[4 + k];
    INFO("extra metric " << w.uniq_name);
    CHECK(m.disp_name == (w.disp_name.empty() ? m.uniq_name : w.disp_name));
    CHECK(m.dtype == "UINT64");
    CHECK(m.kind == "EXCLUSIVE");
    CHECK(m.uom == w.uom);
    bool any = false;
    for (std::uint64_t v : w.values) any = any || v != 0;
    CHECK(m.has_data == any);
    REQUIRE(m.values.size() == n * nl);
    for (std::size_t i = 0; i < n * nl; ++i) CHECK(m.values[i] == static_cast<double>(w.values[i]));
  }

  // exclusive(time) = incl − Σ children's incl; inclusive(visits) = subtree sums; the others
  // unchanged.
  const std::vector<double> excl = r.exclusive(time);
  const std::vector<double> want_excl = exclusive_of(p, p.time_incl);
  double scale = 0;
  for (double v : p.time_incl) scale = std::max(scale, std::fabs(v));
  for (std::size_t i = 0; i < n * nl; ++i) {
    INFO("exclusive time, cnode " << i / nl << " location " << i % nl);
    CHECK(excl[i] == Approx(want_excl[i]).margin(1e-12 * scale));
    CHECK(excl[i] == Approx(b.self[i]).margin(1e-12 * scale));
  }
  std::vector<double> want_visits(n * nl);
  for (std::size_t i = 0; i < n * nl; ++i) want_visits[i] = static_cast<double>(p.visits[i]);
  for (std::size_t c = n; c-- > 1;)  // the writer's parents come before their children
    for (std::size_t l = 0; l < nl; ++l)
      want_visits[static_cast<std::size_t>(p.cnodes[c].parent) * nl + l] += want_visits[c * nl + l];
  CHECK(r.inclusive(visits) == want_visits);
  CHECK(r.exclusive(visits) == visits.values);
  CHECK(r.inclusive(time) == time.values);
  CHECK(r.inclusive(r.metrics[2]) == r.metrics[2].values);
  CHECK(r.inclusive(r.metrics[3]) == r.metrics[3].values);
}

// ---------------------------------------------------------------------------------------------
// The independent reader: cubex_check.py --dump
// ---------------------------------------------------------------------------------------------

struct Dump {
  int rc = -1;
  std::string out;
  // metric uniq name → (cnode, location) → {call path, location label, value as printed}
  std::map<std::string, std::map<std::pair<long, long>, std::vector<std::string>>> cells;
  std::set<std::string> no_data;
};

Dump cubex_dump(const std::string& file) {
  Dump d;
  const prof_test::RunResult r = prof_test::run(
      "/usr/bin/python3 " + shell_quote(std::string(PROF_SHARED_TOOLS) + "/cubex_check.py") + " " +
          shell_quote(file) + " --dump",
      "");
  d.rc = r.rc;
  d.out = r.out;
  // "visits (EXCLUSIVE)  1  main/foo  0 (MPI Rank 0 / Master thread)  2": columns are padded
  // and separated by at least two blanks; the names used here never contain two in a row.
  static const std::regex sep(" {2,}");
  static const std::regex metric_col(R"(^(\S+) \((EXCLUSIVE|INCLUSIVE)\)$)");
  std::istringstream in(d.out);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f(std::sregex_token_iterator(line.begin(), line.end(), sep, -1),
                               std::sregex_token_iterator());
    std::smatch m;
    if (f.size() != 5 || !std::regex_match(f[0], m, metric_col)) continue;
    if (f[1] == "-") {
      d.no_data.insert(m[1]);
      continue;
    }
    const long cnode = std::stol(f[1]);
    const long loc = std::stol(f[3].substr(0, f[3].find(' ')));
    d.cells[m[1]][{cnode, loc}] = {f[2], f[3], f[4]};
  }
  return d;
}

std::string call_path(const cube4::ReadProfile& r, std::size_t c) {
  std::string s = r.regions[r.cnodes[c].region].name;
  for (std::int64_t q = r.cnodes[c].parent; q >= 0;
       q = r.cnodes[static_cast<std::size_t>(q)].parent)
    s = r.regions[r.cnodes[static_cast<std::size_t>(q)].region].name + "/" + s;
  return s;
}

/// Every value, call path and location the independent reader prints equals ours.
void require_matches_dump(const cube4::ReadProfile& r, const Dump& d) {
  INFO(d.out);
  REQUIRE(d.rc == 0);
  const std::size_t nl = r.locations.size(), n = r.cnodes.size();
  std::size_t with_data = 0;
  for (const cube4::ReadMetric& m : r.metrics) {
    INFO("metric " << m.uniq_name);
    if (!m.has_data) {
      CHECK(d.no_data.count(m.uniq_name) == 1);
      continue;
    }
    ++with_data;
    REQUIRE(d.cells.count(m.uniq_name) == 1);
    const auto& cells = d.cells.at(m.uniq_name);
    REQUIRE(cells.size() == n * nl);
    for (std::size_t c = 0; c < n; ++c)
      for (std::size_t l = 0; l < nl; ++l) {
        INFO("cnode " << c << " location " << l);
        const auto it = cells.find({static_cast<long>(c), static_cast<long>(l)});
        REQUIRE(it != cells.end());
        static const std::regex parameters(R"(\[[^\]]*\])");  // our reader keeps none
        CHECK(std::regex_replace(it->second[0], parameters, "") == call_path(r, c));
        CHECK(it->second[1] == std::to_string(l) + " (" + r.locations[l].group + " / " +
                                   r.locations[l].name + ")");
        CHECK(std::strtod(it->second[2].c_str(), nullptr) == m.values[c * nl + l]);  // exact
      }
  }
  CHECK(d.cells.size() == with_data);
  CHECK(d.cells.size() + d.no_data.size() == r.metrics.size());
}

// ---------------------------------------------------------------------------------------------
// Error checks
// ---------------------------------------------------------------------------------------------

/// read() fails with one line "<path>: ..." containing `expected`, and leaves `out` empty.
void require_error(const std::string& path, const std::string& expected) {
  cube4::ReadProfile r;
  r.groups = 7;
  r.regions.resize(3);
  std::string err;
  CHECK_FALSE(cube4::read(path, &r, &err));
  INFO("error: " << err);
  CHECK(err.rfind(path + ": ", 0) == 0);
  CHECK(err.find(expected) != std::string::npos);
  CHECK(err.find('\n') == std::string::npos);
  CHECK(r.regions.empty());
  CHECK(r.metrics.empty());
  CHECK(r.groups == 0);
  CHECK_FALSE(cube4::read(path, nullptr, nullptr));
}

void require_error_archive(const TempDir& dir, const std::vector<TarMember>& members,
                           const std::string& expected) {
  const std::string path = dir.file("broken.cubex");
  spit(path, ustar(members));
  require_error(path, expected);
}

void require_same_profile(const cube4::ReadProfile& a, const cube4::ReadProfile& b) {
  REQUIRE(a.regions.size() == b.regions.size());
  for (std::size_t i = 0; i < a.regions.size(); ++i) {
    INFO("region " << i);
    CHECK(a.regions[i].name == b.regions[i].name);
    CHECK(a.regions[i].canonical == b.regions[i].canonical);
    CHECK(a.regions[i].file == b.regions[i].file);
    CHECK(a.regions[i].begin_line == b.regions[i].begin_line);
    CHECK(a.regions[i].end_line == b.regions[i].end_line);
    CHECK(a.regions[i].paradigm == b.regions[i].paradigm);
    CHECK(a.regions[i].role == b.regions[i].role);
  }
  REQUIRE(a.cnodes.size() == b.cnodes.size());
  for (std::size_t c = 0; c < a.cnodes.size(); ++c) {
    CHECK(a.cnodes[c].region == b.cnodes[c].region);
    CHECK(a.cnodes[c].parent == b.cnodes[c].parent);
  }
  CHECK(a.groups == b.groups);
  REQUIRE(a.locations.size() == b.locations.size());
  for (std::size_t l = 0; l < a.locations.size(); ++l) {
    CHECK(a.locations[l].name == b.locations[l].name);
    CHECK(a.locations[l].type == b.locations[l].type);
    CHECK(a.locations[l].rank == b.locations[l].rank);
    CHECK(a.locations[l].group == b.locations[l].group);
    CHECK(a.locations[l].group_index == b.locations[l].group_index);
  }
  REQUIRE(a.metrics.size() == b.metrics.size());
  for (std::size_t k = 0; k < a.metrics.size(); ++k) {
    INFO("metric " << a.metrics[k].uniq_name);
    CHECK(a.metrics[k].uniq_name == b.metrics[k].uniq_name);
    CHECK(a.metrics[k].disp_name == b.metrics[k].disp_name);
    CHECK(a.metrics[k].dtype == b.metrics[k].dtype);
    CHECK(a.metrics[k].uom == b.metrics[k].uom);
    CHECK(a.metrics[k].kind == b.metrics[k].kind);
    CHECK(a.metrics[k].has_data == b.metrics[k].has_data);
    CHECK(a.metrics[k].values == b.metrics[k].values);
  }
}

/// Writes the make_cubex.py self-test profile `variant` (shared/tools/selftest).
std::string make_cubex(const TempDir& dir, const std::string& variant) {
  const std::string path = dir.file(variant + ".cubex");
  const prof_test::RunResult r =
      prof_test::run("/usr/bin/python3 " +
                         shell_quote(std::string(PROF_SHARED_TOOLS) + "/selftest/make_cubex.py") +
                         " " + shell_quote(path) + " --variant " + variant,
                     "");
  INFO(r.out);
  REQUIRE(r.rc == 0);
  return path;
}

}  // namespace

// =============================================================================================
// Round trips through cube4::write
// =============================================================================================

TEST_CASE("cube4_reader: round trip, one location", "[cube4_reader]") {
  Builder b;
  const auto ids = three_level_tree(b);
  b.locations({"Master thread"});
  const double self[6] = {0.125, 1.5, 0.25, 0.0625, 0.75, 2.0};
  for (std::size_t k = 0; k < 6; ++k) b.set(ids[k], 0, 2 * k + 1, self[k]);
  b.finish();
  b.p.regions[ids[1]].canonical = "_Z3foov";
  TempDir dir;
  const cube4::ReadProfile r = read_ok(write_profile(dir, b.p));
  require_round_trip(b, r);
  CHECK(r.regions[1].canonical == "_Z3foov");
  CHECK(r.regions[1].name == "foo");
  CHECK(r.regions[5].paradigm == "pthread");
  CHECK(r.regions[5].role == "wrapper");
  // Spot checks with values by hand: time of main/bar (id 2) = 0.25 + 2.0 (quux).
  CHECK(r.metric("time")->values[2] == 2.25);
  CHECK(r.metric("visits")->values[5] == 11);
  CHECK(r.metric("no_such_metric") == nullptr);
}

TEST_CASE("cube4_reader: round trip, three locations with zero visits on some", "[cube4_reader]") {
  Builder b = three_locations();
  b.p.process = "MPI Rank 3";
  b.p.rank = 3;
  TempDir dir;
  const cube4::ReadProfile r = read_ok(write_profile(dir, b.p));
  require_round_trip(b, r);
  CHECK(r.locations[1].name == "Pthread thread 1");
  CHECK(r.locations[2].rank == 3);
  CHECK(r.locations[2].group == "MPI Rank 3");
  // Thread 1 never entered main but its subtree's time counts; thread 2 never entered bar.
  CHECK(r.metric("visits")->values[0 * 3 + 1] == 0);
  CHECK(r.metric("time")->values[0 * 3 + 1] == 2.25);
  CHECK(r.metric("time")->values[2 * 3 + 2] == 0);
  CHECK(r.metric("time")->values[1 * 3 + 2] == 0.0078125 + 1.0 / 3);
}

/// One process ("MPI Rank <rank>" when `ranks` > 1, else "Process") per rank: two threads,
/// then two GPU streams in its accelerator group "CUDA Context 1" (the same name in every
/// process, as the CUDA adapter writes it).
Builder gpu_profile(int ranks) {
  Builder b;
  const auto root = b.region("prog", "", -1, -1, "measurement", "artificial");
  const auto launch = b.region("cudaLaunchKernel", "", -1, -1, "cuda", "wrapper");
  const auto kernel = b.region("add(float*, int, float)", "CUDA_KERNEL", -1, -1, "cuda", "function");
  const std::size_t r = b.cnode(root, -1);
  const std::size_t l = b.cnode(launch, static_cast<std::int64_t>(r));
  const std::size_t k = b.cnode(kernel, static_cast<std::int64_t>(l));
  std::vector<std::string> names;
  for (int rank = 0; rank < ranks; ++rank) {
    cube4::Profile::Group process;
    process.name = ranks > 1 ? "MPI Rank " + std::to_string(rank) : std::string("Process");
    process.rank = rank;
    cube4::Profile::Group accel;
    accel.name = "CUDA Context 1";
    accel.rank = rank;
    accel.type = "accelerator";
    accel.creator = static_cast<std::int64_t>(b.p.groups.size());
    b.p.groups.push_back(process);
    b.p.groups.push_back(accel);
    for (const char* n : {"Master thread", "Pthread thread 1", "CUDA[0:7]", "CUDA[0:13]"}) {
      names.push_back(n);
      const bool stream = n[0] == 'C';
      b.p.location_group.push_back(static_cast<std::uint32_t>(b.p.groups.size() - (stream ? 1 : 2)));
      b.p.location_types.push_back(stream ? "accelerator stream" : "thread");
    }
  }
  b.locations(names);
  for (std::size_t loc = 0; loc < names.size(); ++loc) {
    const bool stream = loc % 4 >= 2;
    if (loc % 4 == 0) b.set(r, loc, 1, 0.5);
    if (!stream) b.set(l, loc, 10 + loc, 0.001);
    if (stream) b.set(k, loc, 20 + loc, 0.25);
  }
  b.finish();
  return b;
}

TEST_CASE("cube4_reader: GPU streams: location types, accelerator groups and their process", "[cube4_reader]") {
  TempDir dir;
  SECTION("one process") {
    const Builder b = gpu_profile(1);
    const std::string path = write_profile(dir, b.p);
    const std::string anchor = untar(slurp(path)).back().content;
    REQUIRE(anchor.find("<cube version=\"4.7\">") != std::string::npos);
    const cube4::ReadProfile r = read_ok(path);
    CHECK(r.groups == 2);
    REQUIRE(r.location_groups.size() == 2);
    CHECK(r.location_groups[0].name == "Process");
    CHECK(r.location_groups[0].type == "process");
    CHECK(r.location_groups[0].creator == -1);
    CHECK(r.location_groups[0].process == 0);
    CHECK(r.location_groups[1].name == "CUDA Context 1");
    CHECK(r.location_groups[1].type == "accelerator");
    CHECK(r.location_groups[1].creator_name == "Process");
    CHECK(r.location_groups[1].creator == 0);
    CHECK(r.location_groups[1].process == 0);
    REQUIRE(r.locations.size() == 4);
    const char* const types[4] = {"thread", "thread", "accelerator stream", "accelerator stream"};
    for (std::size_t l = 0; l < 4; ++l) {
      INFO("location " << l);
      CHECK(r.locations[l].name == b.p.locations[l]);
      CHECK(r.locations[l].type == types[l]);
      CHECK(r.locations[l].gpu() == (l >= 2));
      CHECK(r.locations[l].group_index == (l >= 2 ? 1u : 0u));
      CHECK(r.locations[l].group == (l >= 2 ? "CUDA Context 1" : "Process"));
      CHECK(r.locations[l].rank == 0);
    }
    // Values are unchanged: the kernel on the streams, its launching path with visits 0 there.
    const std::vector<double>& visits = r.metric("visits")->values;
    CHECK(visits[2 * 4 + 2] == 22);
    CHECK(visits[2 * 4 + 3] == 23);
    CHECK(visits[1 * 4 + 2] == 0);
    CHECK(r.metric("time")->values[1 * 4 + 3] == 0.25);
  }
  SECTION("two ranks: each accelerator group belongs to the process before it") {
    const cube4::ReadProfile r = read_ok(write_profile(dir, gpu_profile(2).p));
    REQUIRE(r.location_groups.size() == 4);
    CHECK(r.location_groups[1].creator_name == "MPI Rank 0");
    CHECK(r.location_groups[1].creator == 0);
    CHECK(r.location_groups[3].name == "CUDA Context 1");
    CHECK(r.location_groups[3].creator_name == "MPI Rank 1");
    CHECK(r.location_groups[3].creator == 2);
    CHECK(r.location_groups[3].process == 2);
    CHECK(r.location_groups[2].process == 2);
    REQUIRE(r.locations.size() == 8);
    CHECK(r.locations[6].gpu());
    CHECK(r.locations[6].group_index == 3);
    CHECK(r.locations[6].rank == 1);
    CHECK_FALSE(r.locations[4].gpu());
  }
}

TEST_CASE("cube4_reader: creating location groups by name: duplicates, forward, unknown, cycles", "[cube4_reader]") {
  std::string groups;
  int id = 0;
  auto group = [&](const std::string& name, const std::string& type, const std::string& creator, const std::string& loc_type) {
    groups += "<locationgroup Id=\"" + std::to_string(id) + "\"><name>" + name + "</name><rank>" + std::to_string(id) +
              "</rank><type>" + type + "</type>";
    if (!creator.empty()) groups += "<attr key=\"other\" value=\"x\"/><attr key=\"Creating location group\" value=\"" + creator + "\"/>";
    groups += "<location Id=\"" + std::to_string(id) + "\"><name>l" + std::to_string(id) + "</name><rank>0</rank><type>" +
              loc_type + "</type><attr key=\"Creating location group\" value=\"ignored\"/></location></locationgroup>\n";
    ++id;
  };
  group("P", "process", "", "thread");                // 0
  group("A", "accelerator", "P", "accelerator stream");  // 1 → 0
  group("P", "process", "", "thread");                // 2
  group("B", "accelerator", "P", "gpu");              // 3 → 2 (the nearest P before it)
  group("C", "accelerator", "Later", "accelerator stream");  // 4 → 9 (after it)
  group("D", "accelerator", "E", "accelerator stream");  // 5 ↔ 6: a cycle
  group("E", "accelerator", "D", "accelerator stream");  // 6
  group("F", "accelerator", "nobody", "metric");      // 7: unknown name
  group("G", "accelerator", "A", "accelerator stream");  // 8 → 1 → 0: a chain
  group("Later", "process", "", "thread");            // 9
  const std::string anchor =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<cube version=\"4.7\">\n<metrics><metric id=\"0\" type=\"EXCLUSIVE\">"
      "<disp_name>Visits</disp_name><uniq_name>visits</uniq_name><dtype>UINT64</dtype><uom>occ</uom></metric></metrics>\n"
      "<program><region id=\"0\"><name>main</name></region><cnode id=\"0\" calleeId=\"0\"/></program>\n"
      "<system><systemtreenode Id=\"0\"><name>machine m</name><class>machine</class>\n" +
      groups + "</systemtreenode></system>\n</cube>\n";
  TempDir dir;
  const std::string path = dir.file("groups.cubex");
  spit(path, ustar({{"anchor.xml", anchor}}));
  const cube4::ReadProfile r = read_ok(path);
  REQUIRE(r.location_groups.size() == 10);
  const std::int64_t creator[10] = {-1, 0, -1, 2, 9, 6, 5, -1, 1, -1};
  const std::uint32_t process[10] = {0, 0, 2, 2, 9, 5, 6, 7, 0, 9};
  for (std::size_t g = 0; g < 10; ++g) {
    INFO("group " << g);
    CHECK(r.location_groups[g].creator == creator[g]);
    CHECK(r.location_groups[g].process == process[g]);
  }
  CHECK(r.location_groups[7].creator_name == "nobody");
  CHECK(r.location_groups[1].type == "accelerator");
  CHECK(r.locations[3].type == "gpu");
  CHECK(r.locations[3].gpu());
  CHECK_FALSE(r.locations[7].gpu());  // "metric"
  CHECK_FALSE(r.locations[0].gpu());
}

TEST_CASE("cube4_reader: round trip, extra sparse metrics", "[cube4_reader]") {
  Builder b = three_locations();
  const std::size_t cells = b.p.cnodes.size() * 3;
  cube4::ExtraMetric sent = extra("bytes_sent", cells);
  sent.values[5 * 3 + 1] = 4096;                       // quux, location 1
  sent.values[1 * 3 + 0] = 17;                         // foo, location 0
  sent.values[3 * 3 + 2] = (std::uint64_t{1} << 52) + 1;  // still exact as a double
  cube4::ExtraMetric recv = extra("bytes_received", cells);  // zero everywhere: no files
  cube4::ExtraMetric put = extra("bytes_put", cells);
  put.disp_name = "Bytes put";
  put.uom = "B";
  put.values[0] = 1;
  b.p.extra_metrics = {sent, recv, put};
  TempDir dir;
  const cube4::ReadProfile r = read_ok(write_profile(dir, b.p));
  require_round_trip(b, r);
  CHECK(r.metric("bytes_sent")->has_data);
  CHECK(r.metric("bytes_sent")->values[3 * 3 + 2] == 4503599627370497.0);
  CHECK_FALSE(r.metric("bytes_received")->has_data);
  CHECK(r.metric("bytes_put")->disp_name == "Bytes put");
  // An EXCLUSIVE metric summed over the subtree: main's bytes_sent on location 0 = foo's 17.
  CHECK(r.inclusive(*r.metric("bytes_sent"))[0] == 17);

  // Only the metrics asked for are read (each costs call paths x locations x 8 bytes).
  const std::vector<std::string> only = {"visits", "bytes_sent", "no_such_metric"};
  cube4::ReadProfile some;
  std::string err;
  REQUIRE(cube4::read(dir.file("profile.cubex"), &some, &err, &only));
  REQUIRE(some.metrics.size() == 2);
  CHECK(some.metrics[0].uniq_name == "visits");
  CHECK(some.metrics[1].uniq_name == "bytes_sent");
  CHECK(some.metric("bytes_sent")->values == r.metric("bytes_sent")->values);
  CHECK(some.metric("time") == nullptr);
}

TEST_CASE("cube4_reader: round trip, names that need XML escaping", "[cube4_reader]") {
  Builder b;
  const auto main_r = b.region("int main(int, char**)", "src/main&co.cpp", 12, 99);
  const auto less = b.region("bool operator<(A const&, A const&)", "inc/<a>.hpp", 3, 4);
  const auto amp = b.region("a&b", "", -1, -1, "", "");
  const auto quotes = b.region("say \"hi\" 'you' > x \xC3\xA9");
  b.p.regions[less].canonical = "_ZltRK1AS1_";
  const auto m = b.cnode(main_r, -1);
  const auto l = b.cnode(less, static_cast<std::int64_t>(m));
  const auto a = b.cnode(amp, static_cast<std::int64_t>(m));
  const auto q = b.cnode(quotes, static_cast<std::int64_t>(a));
  b.locations({"Master \"thread\" <0> & 'co'"});
  b.set(m, 0, 1, 1.0);
  b.set(l, 0, 2, 0.5);
  b.set(a, 0, 3, 0.25);
  b.set(q, 0, 4, 0.125);
  b.finish();
  b.p.process = "Process & <co>";
  TempDir dir;
  const cube4::ReadProfile r = read_ok(write_profile(dir, b.p));
  require_round_trip(b, r);
  CHECK(r.regions[less].name == "bool operator<(A const&, A const&)");
  CHECK(r.regions[quotes].name == "say \"hi\" 'you' > x \xC3\xA9");
  CHECK(r.regions[amp].paradigm == "unknown");  // written as "unknown" for ""
  CHECK(r.locations[0].group == "Process & <co>");
}

TEST_CASE("cube4_reader: round trip, a 2000-deep call chain", "[cube4_reader]") {
  Builder b;
  const auto main_r = b.region("main");
  const auto rec = b.region("rec");
  b.cnode(main_r, -1);
  for (std::int64_t i = 0; i < 2000; ++i) b.cnode(rec, i);
  b.locations({"Master thread", "Pthread thread 1"});
  for (std::size_t c = 0; c < b.p.cnodes.size(); ++c) {
    b.set(c, 0, 1, 1e-3 * static_cast<double>(c % 7 + 1));
    if (c % 3 == 0) b.set(c, 1, c, 0.5);
  }
  b.finish();
  TempDir dir;
  const cube4::ReadProfile r = read_ok(write_profile(dir, b.p));
  require_round_trip(b, r);
  CHECK(r.cnodes.back().parent == 1999);
}

// =============================================================================================
// Cross-check with the independent reader
// =============================================================================================

TEST_CASE("cube4_reader: values equal cubex_check.py --dump", "[cube4_reader][shared-tools]") {
  TempDir dir;
  SECTION("our writer, three locations and sparse metrics") {
    Builder b = three_locations();
    const std::size_t cells = b.p.cnodes.size() * 3;
    cube4::ExtraMetric sent = extra("bytes_sent", cells);
    sent.values[4 * 3 + 2] = 123456789;
    b.p.extra_metrics = {sent, extra("bytes_received", cells)};
    const std::string path = write_profile(dir, b.p);
    const cube4::ReadProfile r = read_ok(path);
    const Dump d = cubex_dump(path);
    require_matches_dump(r, d);
    CHECK(d.cells.at("time").at({2L, 0L})[2] == "3.25");  // the dump really was parsed
    CHECK(d.no_data.count("bytes_received") == 1);
  }
  SECTION("make_cubex.py: two processes, parameters, ids not in depth-first order") {
    const std::string path = make_cubex(dir, "good");
    require_matches_dump(read_ok(path), cubex_dump(path));
  }
  SECTION("make_cubex.py: big-endian index and data") {
    const std::string path = make_cubex(dir, "big-endian");
    require_matches_dump(read_ok(path), cubex_dump(path));
  }
}

TEST_CASE("cube4_reader: make_cubex.py self-test profiles", "[cube4_reader][shared-tools]") {
  TempDir dir;
  const cube4::ReadProfile good = read_ok(make_cubex(dir, "good"));

  // Structure (make_cubex.py's reference profile, see its docstring).
  REQUIRE(good.regions.size() == 6);
  CHECK(good.regions[2].name == "void ns::Klass<int>::bar(int) const");
  CHECK(good.regions[2].file == "example.cpp");
  CHECK(good.regions[2].begin_line == 70);
  CHECK(good.regions[3].paradigm == "mpi");
  CHECK(good.regions[3].role == "point2point");
  CHECK(good.regions[5].name == "never_called");
  REQUIRE(good.cnodes.size() == 7);
  const std::int64_t parents[7] = {-1, 0, 0, 1, 0, 0, 1};
  const std::uint32_t callees[7] = {0, 1, 2, 2, 3, 4, 1};
  for (std::size_t c = 0; c < 7; ++c) {
    CHECK(good.cnodes[c].parent == parents[c]);
    CHECK(good.cnodes[c].region == callees[c]);
  }
  CHECK(good.groups == 2);
  REQUIRE(good.locations.size() == 3);
  CHECK(good.locations[1].name == "OMP thread 1");
  CHECK(good.locations[1].group == "MPI Rank 0");
  CHECK(good.locations[2].group == "MPI Rank 1");
  CHECK(good.locations[2].group_index == 1);
  CHECK(good.locations[2].rank == 1);
  REQUIRE(good.metrics.size() == 7);
  CHECK_FALSE(good.metric("bytes_put")->has_data);
  CHECK(good.metric("bytes_put")->values == std::vector<double>(21, 0.0));
  CHECK(good.metric("bytes_sent")->values[4 * 3 + 0] == 1024);

  // exclusive(time) equals the exclusive times make_cubex.py built the profile from
  // (EXCL_TIME there; binary fractions, so exact).
  const double excl_time[7][3] = {{1.0, 0.5, 0.75}, {0.5, 0.25, 0.0}, {0.125, 0.0, 0.375},
                                  {0.25, 0.0, 0.0}, {0.0625, 0.0, 0.0}, {0.0, 0.0, 0.1875},
                                  {0.03125, 0.0, 0.0}};
  const std::vector<double> excl = good.exclusive(*good.metric("time"));
  for (std::size_t c = 0; c < 7; ++c)
    for (std::size_t l = 0; l < 3; ++l) CHECK(excl[c * 3 + l] == excl_time[c][l]);
  // inclusive(visits) of main = all visits of the location.
  const std::vector<double> incl_visits = good.inclusive(*good.metric("visits"));
  CHECK(incl_visits[0] == 1 + 2 + 1 + 4 + 1 + 0 + 1);
  CHECK(incl_visits[2] == 1 + 0 + 3 + 0 + 0 + 1 + 0);

  SECTION("variants with the same content") {
    for (const char* v :
         {"big-endian", "dense-index", "xml-comment", "single-quotes", "parameter-order",
          "bad-cube-version", "bad-tar-padding", "simple-metric"}) {
      INFO("variant " << v);
      require_same_profile(read_ok(make_cubex(dir, v)), good);
    }
  }
  SECTION("variants with small differences") {
    cube4::ReadProfile r = read_ok(make_cubex(dir, "region-no-begin"));
    CHECK(r.regions[1].begin_line == -1);
    r.regions[1].begin_line = 50;
    require_same_profile(r, good);

    r = read_ok(make_cubex(dir, "bad-location-type"));
    CHECK(r.locations[1].type == "process");  // the last location of the first group
    r.locations[1].type = "thread";
    require_same_profile(r, good);

    r = read_ok(make_cubex(dir, "empty-index"));  // 4.index with 0 rows: all zero
    CHECK(r.metric("bytes_sent")->has_data);
    CHECK(r.metric("bytes_sent")->values == std::vector<double>(21, 0.0));

    r = read_ok(make_cubex(dir, "bad-visits"));  // readable: INT64 visits with a -3
    CHECK(r.metric("visits")->dtype == "INT64");
    CHECK(r.metric("visits")->values[2 * 3 + 1] == -3);

    r = read_ok(make_cubex(dir, "nan-time"));
    CHECK(std::isnan(r.metric("time")->values[5 * 3 + 0]));

    r = read_ok(make_cubex(dir, "no-time"));
    CHECK(r.metric("time") == nullptr);
    CHECK(r.metrics.size() == 6);
  }
  SECTION("two roots: positions continue in the second root's tree") {
    cube4::ReadProfile r = read_ok(make_cubex(dir, "two-roots"));
    REQUIRE(r.cnodes.size() == 8);
    CHECK(r.cnodes[7].parent == -1);
    CHECK(r.cnodes[7].region == 5);
    for (cube4::ReadMetric& m : r.metrics) {
      for (std::size_t l = 0; l < 3; ++l) CHECK(m.values[7 * 3 + l] == 0);
      m.values.resize(21);
    }
    r.cnodes.pop_back();
    require_same_profile(r, good);
  }
  SECTION("broken variants") {
    require_error(make_cubex(dir, "bad-index-order"),
                  "member 0.index: row positions not strictly ascending");
    require_error(make_cubex(dir, "bad-row-count"),
                  "member 1.data: 154 bytes, expected 10 + 7 rows x 3 locations x 8 bytes");
    require_error(make_cubex(dir, "bad-tar-checksum"), "tar header at offset 0: checksum mismatch");
    require_error(make_cubex(dir, "cnode-id-gap"),
                  "anchor.xml: cnode ids are not 0..6 (found cnode 7)");
    require_error(make_cubex(dir, "location-id-gap"), "anchor.xml: location ids are not 0..2");
    require_error(make_cubex(dir, "missing-data-file"), "member 0.data missing");
    require_error(make_cubex(dir, "gzip"), "not a ustar archive (gzip-compressed");
  }
}

// =============================================================================================
// Hand-made archives
// =============================================================================================

namespace {

// Two roots, cnode ids in neither pre-order nor level order, four locations in three groups
// under two nodes, nested and skipped metrics, single quotes, comments, CDATA, entities:
//   c3 main [parameter]            deep = 3 0 4 2 1 5
//    ├ c0 f<int>                   wide = 3 0 2 4 1 5
//    │  └ c4 g & h é
//    └ c2 g & h é
//   c1 second root
//    └ c5 f<int>
const char* kHandAnchor = R"(<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE cube [ <!ELEMENT cube ANY> ]>
<cube version="4.7">
<attr key="Creator" value="by hand &amp; test"/>
<doc><mirrors><murl>http://example.org/</murl></mirrors></doc>
<metrics title="Metrics">
<metric id="0" type="EXCLUSIVE" viztype="NORMAL">
<disp_name>Visits</disp_name><uniq_name> visits </uniq_name><dtype>UINT64</dtype><uom>occ</uom>
<url/><descr>Number &amp; more</descr>
<metric id="1"><disp_name>Negative</disp_name><uniq_name>visits::neg</uniq_name><dtype>INT64</dtype><uom>occ</uom>
<attr key="k" value="v"/></metric>
<unknown_element x="1"><dtype>UINT8</dtype></unknown_element>
</metric>
<metric id="2" type='INCLUSIVE'><disp_name>Time</disp_name><uniq_name>time</uniq_name><dtype>DOUBLE</dtype><uom>sec</uom></metric>
<metric id="3" type="POSTDERIVED"><disp_name>Derived</disp_name><uniq_name>derived</uniq_name><dtype>DOUBLE</dtype><uom>sec</uom><cubepl>metric::time(i)</cubepl></metric>
<metric id="4" type="EXCLUSIVE"><disp_name>Tau</disp_name><uniq_name>tau</uniq_name><dtype>TAU_ATOMIC</dtype><uom>sec</uom></metric>
<metric id="6" type="EXCLUSIVE"><disp_name>Max</disp_name><uniq_name>maxm</uniq_name><dtype>MAXDOUBLE</dtype><uom>sec</uom></metric>
<metric id="5" type="EXCLUSIVE"><disp_name>Small</disp_name><uniq_name>small</uniq_name><dtype>INT16</dtype><uom>x</uom></metric>
</metrics>
<program title="Call tree">
<region id='0' mod="a.c" begin="1" end="9"><name>main</name><paradigm>user</paradigm><role>function</role></region>
<region id="1" mod='a&apos;s.c' begin="-1" end="-1"><name>f&lt;int&gt;</name><mangled_name><![CDATA[_Z1fIiEvv<&>]]></mangled_name><url></url><descr></descr></region>
<region id="2"><name>g &#x26; h &#233;</name><!-- a comment <region id="9"> --></region>
<region id="3" mod="b.c" begin="20" end="30"><name>second root</name><attr key="a" value="b"/></region>
<cnode id="3" calleeId="0">
  <parameter partype="numeric" parkey="it" parvalue="1" />
  <attr key="k" value="v"/>
  <cnode id="0" calleeId="1" line="3" mod="a.c">
    <cnode id="4" calleeId="2"/>
  </cnode>
  <cnode   id = "2"   calleeId="2" ></cnode >
</cnode>
<cnode id="1" calleeId="3">
  <cnode id="5" calleeId="1"/>
</cnode>
</program>
<system>
<systemtreenode Id="0"><name>machine m</name><class>machine</class>
<systemtreenode Id="1"><name>node a</name><class>node</class>
<locationgroup Id="0"><name>MPI Rank 0</name><rank>0</rank><type>process</type>
<location Id="0"><name>Master thread</name><rank>0</rank><type>thread</type></location>
<location Id="1"><name>OMP thread 1</name><rank>1</rank><type>thread</type></location>
</locationgroup>
</systemtreenode>
<systemtreenode Id="2"><name>node b</name><class>node</class>
<locationgroup Id="1"><name>MPI Rank 1</name><rank> 1 </rank><type>process</type>
<location Id="2"><name>Master thread</name><rank>0</rank><type>thread</type></location>
</locationgroup>
<locationgroup Id="2"><name>GPU</name><rank>1</rank><type>accelerator</type>
<location Id="3"><name>CUDA stream</name><rank>0</rank><type>accelerator stream</type></location>
</locationgroup>
</systemtreenode>
</systemtreenode>
<topologies><cart name="x" ndims="1"><dim name="d" size="4" periodic="false"/><coord locId="0">0</coord></cart></topologies>
</system>
</cube>
)";

const std::uint32_t kDeep[6] = {3, 0, 4, 2, 1, 5};
const std::uint32_t kWide[6] = {3, 0, 2, 4, 1, 5};
const std::int64_t kParent[6] = {3, -1, 3, -1, 0, 1};
constexpr std::size_t kLocs = 4;

double hand_visits(std::size_t c, std::size_t l) { return static_cast<double>(10 * c + l); }
double hand_self(std::size_t c, std::size_t l) {
  return 0.5 * static_cast<double>(c + 1) + 0.25 * static_cast<double>(l);
}

/// Inclusive time of the hand-made tree: self + children (binary fractions: exact).
double hand_incl(std::size_t c, std::size_t l) {
  double v = hand_self(c, l);
  for (std::size_t k = 0; k < 6; ++k)
    if (kParent[k] == static_cast<std::int64_t>(c)) v += hand_incl(k, l);
  return v;
}

/// visits DENSE (deep order), visits::neg SPARSE big-endian (cnodes 0 and 1 = deep positions
/// 1 and 4), time DENSE (wide order), small SPARSE INT16 (cnode 5 = deep position 5).
std::vector<TarMember> hand_members(bool time_big_endian) {
  std::vector<std::int64_t> visits;
  for (std::uint32_t c : kDeep)
    for (std::size_t l = 0; l < kLocs; ++l)
      visits.push_back(static_cast<std::int64_t>(hand_visits(c, l)));
  std::vector<std::int64_t> neg;
  for (std::uint32_t c : {0u, 1u})
    for (std::size_t l = 0; l < kLocs; ++l) neg.push_back(-static_cast<std::int64_t>(100 * c + l));
  std::vector<double> time;
  for (std::uint32_t c : kWide)
    for (std::size_t l = 0; l < kLocs; ++l) time.push_back(hand_incl(c, l));
  return {{"remapping.spec", "ignored"},
          {"0.data", integers(visits, 8, false)},
          {"0.index", dense_index(false)},
          {"1.data", integers(neg, 8, true)},
          {"1.index", sparse_index({1, 4}, true)},
          {"2.index", dense_index(time_big_endian)},
          {"2.data", doubles(time, time_big_endian)},
          {"5.index", sparse_index({5}, false)},
          {"5.data", integers({-2, 3, -32768, 32767}, 2, false)},
          {"anchor.xml", kHandAnchor}};
}

void require_hand_profile(const cube4::ReadProfile& r) {
  REQUIRE(r.regions.size() == 4);
  CHECK(r.regions[0].name == "main");
  CHECK(r.regions[0].canonical == "main");  // no <mangled_name>
  CHECK(r.regions[0].paradigm == "user");
  CHECK(r.regions[1].name == "f<int>");
  CHECK(r.regions[1].canonical == "_Z1fIiEvv<&>");
  CHECK(r.regions[1].file == "a's.c");
  CHECK(r.regions[1].paradigm.empty());
  CHECK(r.regions[2].name == "g & h \xC3\xA9");
  CHECK(r.regions[2].file.empty());
  CHECK(r.regions[2].begin_line == -1);
  CHECK(r.regions[2].end_line == -1);
  CHECK(r.regions[3].begin_line == 20);
  CHECK(r.regions[3].end_line == 30);

  REQUIRE(r.cnodes.size() == 6);
  const std::uint32_t callee[6] = {1, 3, 2, 0, 2, 1};
  for (std::size_t c = 0; c < 6; ++c) {
    INFO("cnode " << c);
    CHECK(r.cnodes[c].region == callee[c]);
    CHECK(r.cnodes[c].parent == kParent[c]);
  }

  CHECK(r.groups == 3);
  REQUIRE(r.locations.size() == kLocs);
  CHECK(r.locations[1].name == "OMP thread 1");
  CHECK(r.locations[1].group_index == 0);
  CHECK(r.locations[2].group == "MPI Rank 1");
  CHECK(r.locations[2].rank == 1);
  CHECK(r.locations[2].group_index == 1);
  CHECK(r.locations[3].name == "CUDA stream");
  CHECK(r.locations[3].type == "accelerator stream");
  CHECK(r.locations[3].gpu());
  CHECK_FALSE(r.locations[2].gpu());
  CHECK(r.locations[3].group == "GPU");
  CHECK(r.locations[3].group_index == 2);
  // An accelerator group without a "Creating location group" attribute is its own process.
  REQUIRE(r.location_groups.size() == 3);
  CHECK(r.location_groups[1].name == "MPI Rank 1");
  CHECK(r.location_groups[1].rank == 1);
  CHECK(r.location_groups[1].type == "process");
  CHECK(r.location_groups[2].type == "accelerator");
  CHECK(r.location_groups[2].creator == -1);
  CHECK(r.location_groups[2].process == 2);

  // Metric ids 0, 1, 2, 5, 6; the derived (3) and TAU_ATOMIC (4) ones are skipped.
  REQUIRE(r.metrics.size() == 5);
  CHECK(r.metrics[0].uniq_name == "visits");
  CHECK(r.metrics[1].uniq_name == "visits::neg");
  CHECK(r.metrics[1].kind == "EXCLUSIVE");  // no type attribute
  CHECK(r.metrics[2].uniq_name == "time");
  CHECK(r.metrics[3].uniq_name == "small");
  CHECK(r.metrics[4].uniq_name == "maxm");
  CHECK(r.metric("derived") == nullptr);
  CHECK(r.metric("tau") == nullptr);

  const cube4::ReadMetric& visits = r.metrics[0];
  const cube4::ReadMetric& time = r.metrics[2];
  const std::vector<double> excl = r.exclusive(time);
  for (std::size_t c = 0; c < 6; ++c)
    for (std::size_t l = 0; l < kLocs; ++l) {
      INFO("cnode " << c << " location " << l);
      const std::size_t i = c * kLocs + l;
      CHECK(visits.values[i] == hand_visits(c, l));
      CHECK(r.metrics[1].values[i] == (c <= 1 ? -static_cast<double>(100 * c + l) : 0.0));
      CHECK(time.values[i] == hand_incl(c, l));
      CHECK(excl[i] == hand_self(c, l));
      CHECK(r.metrics[3].values[i] ==
            (c == 5 ? std::vector<double>{-2, 3, -32768, 32767}[l] : 0.0));
      CHECK(r.metrics[4].values[i] == 0);
    }
  CHECK_FALSE(r.metrics[4].has_data);
  CHECK(r.inclusive(r.metrics[4]) == r.metrics[4].values);
  // inclusive(visits) with a parent id larger than its child's (c0 under c3).
  const std::vector<double> incl = r.inclusive(visits);
  for (std::size_t l = 0; l < kLocs; ++l) {
    CHECK(incl[3 * kLocs + l] ==
          hand_visits(3, l) + hand_visits(0, l) + hand_visits(4, l) + hand_visits(2, l));
    CHECK(incl[1 * kLocs + l] == hand_visits(1, l) + hand_visits(5, l));
  }
}

}  // namespace

TEST_CASE("cube4_reader: hand-made DENSE indices, two roots, byte orders", "[cube4_reader]") {
  TempDir dir;
  const std::string path = dir.file("hand.cubex");
  SECTION("little-endian time") {
    spit(path, ustar(hand_members(false)));
    require_hand_profile(read_ok(path));
  }
  SECTION("big-endian time") {
    spit(path, ustar(hand_members(true)));
    require_hand_profile(read_ok(path));
  }
  SECTION("CubeW's padding: a zero block after members of k*512 bytes") {
    std::vector<TarMember> ms = hand_members(false);
    std::string& anchor = member(ms, "anchor.xml").content;
    anchor.append((512 - anchor.size() % 512) % 512, ' ');
    REQUIRE(anchor.size() % 512 == 0);
    std::rotate(ms.begin(), ms.end() - 1, ms.end());  // anchor.xml first
    ms.insert(ms.begin() + 1, TarMember{"empty", ""});
    spit(path, ustar(ms, true));
    require_hand_profile(read_ok(path));
  }
  SECTION("GNU long names, pax headers, directories and links are handled or skipped") {
    std::vector<TarMember> ms = hand_members(false);
    TarMember& index = member(ms, "0.index");
    index.name = "placeholder-name";
    const std::string pax_path = "18 path=./0.index\n";
    REQUIRE(pax_record("path", "./0.index") == pax_path);
    ms.insert(ms.begin(), TarMember{"pax_global_header", pax_record("comment", "abc"), 'g'});
    ms.insert(ms.begin() + 1, TarMember{"somedir/", "", '5'});
    ms.insert(ms.begin() + 2, TarMember{"link", "", '2'});
    // A pax size= overrides the header's size field (CubeW does this for huge members).
    TarMember& neg_data = member(ms, "1.data");
    neg_data.header_size = 3;
    const auto at1 =
        std::find_if(ms.begin(), ms.end(), [](const TarMember& m) { return m.name == "1.data"; });
    ms.insert(at1, TarMember{"PaxHeader/1.data",
                             pax_record("size", std::to_string(at1->content.size())) +
                                 pax_record("mtime", "1.5"),
                             'x'});
    const auto at = std::find_if(ms.begin(), ms.end(),
                                 [](const TarMember& m) { return m.name == "placeholder-name"; });
    ms.insert(at, TarMember{"PaxHeader/0.index", pax_path, 'x'});
    TarMember& data = member(ms, "2.data");
    data.name = "short";
    const std::string long_name = "2.data";
    const auto at2 =
        std::find_if(ms.begin(), ms.end(), [](const TarMember& m) { return m.name == "short"; });
    ms.insert(at2, TarMember{"././@LongLink", long_name + std::string(1, '\0'), 'L'});
    spit(path, ustar(ms));
    require_hand_profile(read_ok(path));
  }
}

TEST_CASE("cube4_reader: byte-swapped index and data of cube4::write", "[cube4_reader]") {
  Builder b = three_locations();
  TempDir dir;
  const std::string path = write_profile(dir, b.p);
  const cube4::ReadProfile little = read_ok(path);
  std::vector<TarMember> ms = untar(slurp(path));
  for (TarMember& m : ms) {
    if (m.name.size() > 6 && m.name.compare(m.name.size() - 6, 6, ".index") == 0) {
      REQUIRE(m.content[17] == 1);  // SPARSE: marker(11) word(4) version(2) format(1) N(4) list
      std::string swapped = swap_words(m.content.substr(0, 15), 11, 4) +
                            swap_words(m.content.substr(15, 2), 0, 2) + m.content.substr(17, 1) +
                            swap_words(m.content.substr(18), 0, 4);
      m.content = swapped;
    } else if (m.name.size() > 5 && m.name.compare(m.name.size() - 5, 5, ".data") == 0) {
      m.content = swap_words(m.content, 10, 8);
    }
  }
  CHECK(member(ms, "0.index").content.substr(11, 4) == std::string("\0\0\0\1", 4));
  const std::string swapped = dir.file("swapped.cubex");
  spit(swapped, ustar(ms));
  require_same_profile(read_ok(swapped), little);
  require_round_trip(b, read_ok(swapped));
}

// =============================================================================================
// Errors
// =============================================================================================

TEST_CASE("cube4_reader: errors name the file and the cause on one line", "[cube4_reader]") {
  TempDir dir;
  Builder b = three_locations();
  const std::string good = write_profile(dir, b.p);
  const std::string archive = slurp(good);
  const std::vector<TarMember> members = untar(archive);
  REQUIRE(members.size() == 9);

  SECTION("no such file, a directory") {
    require_error(dir.file("nonexistent.cubex"), "No such file or directory");
    require_error(dir.path, "is a directory");
  }
  SECTION("not a tar archive") {
    const std::string path = dir.file("text.cubex");
    spit(path, "");
    require_error(path, "not a ustar archive (empty file)");
    spit(path, "just some text\n");
    require_error(path, "not a ustar archive");
    spit(path, std::string(2000, 'x'));
    require_error(path, "not a ustar archive");
    spit(path, std::string(2048, '\0'));
    require_error(path, "not a ustar archive");
    spit(path, "\x1f\x8b" + std::string(600, '\0'));
    require_error(path, "not a ustar archive (gzip-compressed");
  }
  SECTION("truncated archive") {
    const std::string path = dir.file("truncated.cubex");
    spit(path, archive.substr(0, archive.size() / 2));
    require_error(path, "truncated");
    spit(path, archive.substr(0, 512 + 30));  // the first member cut short
    require_error(path, "member '1.data' truncated");
    spit(path, archive.substr(0, 1024 + 100));  // a partial second header
    require_error(path, "truncated archive");
    spit(path, archive.substr(0, 1024));  // whole members only, anchor.xml lost
    require_error(path, "member anchor.xml missing");
  }
  SECTION("bad header checksum") {
    std::string bad = archive;
    bad[512 * 2] = 'X';  // first byte of the name in the second header
    const std::string path = dir.file("checksum.cubex");
    spit(path, bad);
    require_error(path, "tar header at offset 1024: checksum mismatch");
  }
  SECTION("missing members") {
    std::vector<TarMember> ms = members;
    remove_member(ms, "anchor.xml");
    require_error_archive(dir, ms, "member anchor.xml missing");
    ms = members;
    remove_member(ms, "0.data");
    require_error_archive(dir, ms, "member 0.data missing (0.index exists)");
    ms = members;
    remove_member(ms, "1.index");
    require_error_archive(dir, ms, "member 1.index missing (1.data exists)");
  }
  SECTION("anchor.xml: references and ids") {
    std::vector<TarMember> ms = members;
    replace_once(member(ms, "anchor.xml").content, "<cnode id=\"5\" calleeId=\"5\">",
                 "<cnode id=\"5\" calleeId=\"9\">");
    require_error_archive(dir, ms, "anchor.xml: cnode 5 references unknown region 9");
    ms = members;
    replace_once(member(ms, "anchor.xml").content, "<cnode id=\"4\" ", "<cnode id=\"1\" ");
    require_error_archive(dir, ms, "anchor.xml: duplicate cnode id 1");
    ms = members;
    replace_once(member(ms, "anchor.xml").content, "<cnode id=\"4\" ", "<cnode id=\"x4\" ");
    require_error_archive(dir, ms, "attribute id='x4' of <cnode> is not an integer");
    ms = members;
    replace_once(member(ms, "anchor.xml").content, "<cnode id=\"4\" calleeId=\"4\">",
                 "<cnode id=\"4\">");
    require_error_archive(dir, ms, "<cnode> without attribute calleeId");
    ms = members;
    replace_once(member(ms, "anchor.xml").content, "<region id=\"3\" ", "<region id=\"7\" ");
    require_error_archive(dir, ms, "anchor.xml: region ids are not 0..5 (found region 7)");
    ms = members;
    replace_once(member(ms, "anchor.xml").content, "<metric id=\"3\" ", "<metric id=\"2\" ");
    require_error_archive(dir, ms, "anchor.xml: duplicate metric id 2");
    ms = members;
    replace_once(member(ms, "anchor.xml").content, "<rank>0</rank>\n<type>process",
                 "<rank>zero</rank>\n<type>process");
    require_error_archive(dir, ms, "location group rank 'zero' is not an integer");
  }
  SECTION("anchor.xml: malformed XML") {
    std::vector<TarMember> ms = members;
    std::string& anchor = member(ms, "anchor.xml").content;
    const std::string original = anchor;
    replace_once(anchor, "</program>", "</programm>");
    require_error_archive(dir, ms, "</programm> does not close <program>");
    anchor = original.substr(0, original.find("</program>"));
    require_error_archive(dir, ms, "unexpected end of document: <program> not closed");
    anchor = original;
    replace_once(anchor, "<metrics>", "<metrics><!-- unterminated");
    require_error_archive(dir, ms, "anchor.xml: line 9: unterminated comment");
    anchor = original;
    replace_once(anchor, "<cube version=\"4.4\">", "<cubes version=\"4.4\">");
    require_error_archive(dir, ms, "root element <cubes> is not <cube>");
    anchor = "<?xml version=\"1.0\"?>\n";
    require_error_archive(dir, ms, "anchor.xml: line 2: no <cube> element");
    anchor = original;
    replace_once(anchor, "<cnode id=\"4\" calleeId=\"4\">", "<cnode id=\"4\" calleeId=4>");
    require_error_archive(dir, ms, "attribute calleeId of <cnode> has no quoted value");
    anchor = original;
    replace_once(anchor, "<cnode id=\"4\" calleeId=\"4\">", "<cnode id=\"4\" calleeId=\"4>");
    require_error_archive(dir, ms, "anchor.xml: line");
  }
  SECTION("index and data members") {
    std::vector<TarMember> ms = members;
    member(ms, "0.data").content = "ZCUBEX.DATA" + std::string(40, '\0');
    require_error_archive(dir, ms, "member 0.data: compressed CUBE data is not supported");
    ms = members;
    member(ms, "0.data").content.pop_back();
    require_error_archive(dir, ms,
                          "member 0.data: 153 bytes, expected 10 + 6 rows x 3 locations x 8 bytes");
    ms = members;
    member(ms, "0.data").content[0] = 'X';
    require_error_archive(dir, ms, "member 0.data: not CUBE data");
    ms = members;
    member(ms, "2.index").content[3] = 'X';
    require_error_archive(dir, ms, "member 2.index: not a CUBE index");
    ms = members;
    member(ms, "2.index").content[11] = 2;  // endianness word 2
    require_error_archive(dir, ms, "member 2.index: bad endianness marker");
    ms = members;
    member(ms, "2.index").content[17] = 2;  // BITVECTOR
    require_error_archive(dir, ms, "member 2.index: unsupported index format 2");
    ms = members;
    member(ms, "2.index").content[22 + 4 * 5] = 6;  // last position 6 of 6 cnodes
    require_error_archive(dir, ms, "member 2.index: row position 6 out of range (6 cnodes)");
    ms = members;
    member(ms, "2.index").content += std::string(4, '\0');
    require_error_archive(dir, ms, "member 2.index: 50 bytes, expected 46 for 6 rows");
    ms = members;
    member(ms, "2.index").content = dense_index(false) + "x";
    require_error_archive(dir, ms, "member 2.index: DENSE index of 19 bytes, expected 18");
  }
  SECTION("no pointers for the results") {
    CHECK(cube4::read(good, nullptr, nullptr));
    CHECK_FALSE(cube4::read(dir.file("nonexistent.cubex"), nullptr, nullptr));
  }
}

TEST_CASE("cube4_reader: corrupted files never crash", "[cube4_reader]") {
  TempDir dir;
  Builder b = three_locations();
  b.p.extra_metrics = {extra("bytes_sent", b.p.cnodes.size() * 3)};
  b.p.extra_metrics[0].values[4] = 99;
  const std::string archive = slurp(write_profile(dir, b.p));
  const std::string path = dir.file("corrupt.cubex");
  const std::size_t anchor_at = archive.find("<?xml");
  REQUIRE(anchor_at != std::string::npos);
  std::vector<TarMember> members = untar(archive);
  const std::size_t anchor_size = member(members, "anchor.xml").content.size();
  std::size_t failures = 0, successes = 0;
  auto attempt = [&](const std::string& content) {
    spit(path, content);
    cube4::ReadProfile r;
    std::string err;
    if (cube4::read(path, &r, &err)) {
      ++successes;
      return;
    }
    ++failures;
    INFO(err);
    CHECK(err.rfind(path + ": ", 0) == 0);
    CHECK(err.find('\n') == std::string::npos);
    CHECK(r.cnodes.empty());
  };
  for (std::size_t len = 0; len < archive.size(); len += 61) attempt(archive.substr(0, len));
  CHECK(failures > 0);
  std::mt19937 rng(12345);
  std::uniform_int_distribution<std::size_t> where(0, archive.size() - 1);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<std::size_t> in_anchor(anchor_at, anchor_at + anchor_size - 1);
  for (int i = 0; i < 400; ++i) {
    std::string s = archive;
    for (int k = 0; k < 1 + i % 4; ++k)
      s[i % 2 ? where(rng) : in_anchor(rng)] = static_cast<char>(byte(rng));
    attempt(s);
  }
  CHECK(successes > 0);
}

TEST_CASE("cube4_reader: exclusive and inclusive on hand-built profiles", "[cube4_reader]") {
  cube4::ReadProfile p;
  p.regions.resize(1);
  // 2 → {0 → 1}, 3 a second root; parents with larger ids than their children.
  p.cnodes = {{0, 2}, {0, 0}, {0, -1}, {0, -1}};
  p.locations.resize(2);
  cube4::ReadMetric m;
  m.kind = "EXCLUSIVE";
  m.dtype = "UINT64";
  m.values = {1, 10, 2, 20, 4, 40, 8, 80};
  CHECK(p.inclusive(m) == std::vector<double>{3, 30, 2, 20, 7, 70, 8, 80});
  CHECK(p.exclusive(m) == m.values);
  cube4::ReadMetric incl = m;
  incl.kind = "INCLUSIVE";
  incl.dtype = "DOUBLE";
  incl.values = p.inclusive(m);
  CHECK(p.exclusive(incl) == m.values);
  CHECK(p.inclusive(incl) == incl.values);
  m.dtype = "MINDOUBLE";
  CHECK(p.inclusive(m) == m.values);
  m.dtype = "MAXDOUBLE";
  CHECK(p.inclusive(m) == m.values);
  incl.dtype = "MAXDOUBLE";
  CHECK(p.exclusive(incl) == incl.values);

  // Malformed by hand: a parent cycle and an out-of-range parent do not hang or crash.
  m.dtype = "UINT64";
  p.cnodes = {{0, 1}, {0, 0}, {0, 99}, {0, -1}};
  CHECK(p.inclusive(m) == std::vector<double>{1, 10, 2, 20, 4, 40, 8, 80});
  m.values.pop_back();  // wrong size: unchanged
  CHECK(p.inclusive(m) == m.values);
}
