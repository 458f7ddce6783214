// SPDX-License-Identifier: BSD-3-Clause
// Unit tests of the CUBE4 writer: synthetic profiles → profile.cubex in a temp directory, read
// back independently with the shared cubex_check.py (its own reader, written from
// CUBE4-FORMAT.md). Every stored value is compared with `--dump`, so a row written in the wrong
// enumeration (deep vs wide) shows up as a value at the wrong call path.
#include <catch2/catch.hpp>

#include "tests/unit/test_support.hpp"

#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "measurement/profiling/cube4_writer.hpp"

#ifndef PROF_SHARED_TOOLS
#define PROF_SHARED_TOOLS "/work/shared/tools"
#endif

namespace fs = std::filesystem;
namespace cube4 = prof::cube4;

namespace {

struct TempDir : prof_test::TempDir {
  TempDir() : prof_test::TempDir("prof_test_cube4_") {}
  std::string cubex() const { return path + "/profile.cubex"; }
};

std::string shell_quote(const std::string& s) {
  std::string r = "'";
  for (char c : s) r += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return r + "'";
}

/// One `--dump` line: metric uniq name, cnode id, call path, location id, value as printed.
struct Cell {
  std::string path;
  std::string value;
};

struct Check {
  int rc = -1;
  std::string out;                                          // stdout + stderr
  std::map<std::string, std::map<std::pair<long, long>, Cell>> cells;  // metric → (cnode, loc)
  std::map<std::string, bool> no_data;                      // metric printed as "(no data files)"
  std::string last_line;
};

/// Runs cubex_check.py --dump on `file` with `args` and parses the dump table.
Check cubex_check(const std::string& file, const std::string& args) {
  Check c;
  const std::string cmd = "python3 " + shell_quote(std::string(PROF_SHARED_TOOLS) +
                                                   "/cubex_check.py") +
                          " " + shell_quote(file) + " " + args + " --dump";
  const prof_test::RunResult r = prof_test::run(cmd, "");  // stdout and stderr together
  c.out = r.out;
  c.rc = r.rc;

  // Columns are padded and separated by at least two blanks; our names never contain two.
  static const std::regex sep(" {2,}");
  static const std::regex metric_col(R"(^(\S+) \((EXCLUSIVE|INCLUSIVE)\)$)");
  std::istringstream in(c.out);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) c.last_line = line;
    std::vector<std::string> f(std::sregex_token_iterator(line.begin(), line.end(), sep, -1),
                               std::sregex_token_iterator());
    std::smatch m;
    if (f.size() != 5 || !std::regex_match(f[0], m, metric_col)) continue;
    const std::string metric = m[1];
    if (f[1] == "-") {
      c.no_data[metric] = true;
      continue;
    }
    const long cnode = std::stol(f[1]);
    const long loc = std::stol(f[3].substr(0, f[3].find(' ')));
    c.cells[metric][{cnode, loc}] = Cell{f[2], f[4]};
  }
  INFO(c.out);
  CHECK(c.out.find("WARNING") == std::string::npos);  // not even a warning
  return c;
}

/// Builds a consistent profile from visits and exclusive ("self") times: inclusive time =
/// self + children, min_time = incl/visits/2, max_time = incl (0 where visits == 0).
struct Builder {
  cube4::Profile p;
  std::vector<double> self;

  std::uint32_t region(const std::string& name, const std::string& file = "", int b = -1,
                       int e = -1) {
    cube4::Region r;
    r.name = name;
    r.canonical = name;
    r.file = file;
    r.begin_line = b;
    r.end_line = e;
    r.paradigm = "compiler";
    r.role = "function";
    p.regions.push_back(r);
    return static_cast<std::uint32_t>(p.regions.size() - 1);
  }
  std::size_t cnode(std::uint32_t region, std::int64_t parent) {
    p.cnodes.push_back({region, parent});
    return p.cnodes.size() - 1;
  }
  void locations(std::vector<std::string> names) {
    p.locations = std::move(names);
    const std::size_t cells = p.cnodes.size() * p.locations.size();
    p.visits.assign(cells, 0);
    self.assign(cells, 0.0);
  }
  std::size_t at(std::size_t c, std::size_t l) const { return c * p.locations.size() + l; }
  void set(std::size_t c, std::size_t l, std::uint64_t visits, double self_time) {
    p.visits[at(c, l)] = visits;
    self[at(c, l)] = self_time;
  }
  void finish() {
    const std::size_t nl = p.locations.size();
    p.time_incl = self;
    for (std::size_t c = p.cnodes.size(); c-- > 1;)  // children after parents: bottom-up
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
  std::string call_path(std::size_t c) const {
    std::string s = p.regions[p.cnodes[c].region].name;
    for (std::int64_t q = p.cnodes[c].parent; q >= 0; q = p.cnodes[static_cast<std::size_t>(q)].parent)
      s = p.regions[p.cnodes[static_cast<std::size_t>(q)].region].name + "/" + s;
    return s;
  }
};

/// Every value of the four standard metrics, as dumped, equals the profile's value.
void require_all_values(const Builder& b, const Check& c) {
  const cube4::Profile& p = b.p;
  const std::size_t nl = p.locations.size();
  const char* metrics[] = {"visits", "time", "min_time", "max_time"};
  for (const char* m : metrics) {
    INFO("metric " << m);
    REQUIRE(c.cells.count(m) == 1);
    const auto& cells = c.cells.at(m);
    REQUIRE(cells.size() == p.cnodes.size() * nl);
    for (std::size_t n = 0; n < p.cnodes.size(); ++n)
      for (std::size_t l = 0; l < nl; ++l) {
        INFO("cnode " << n << " location " << l);
        const auto it = cells.find({static_cast<long>(n), static_cast<long>(l)});
        REQUIRE(it != cells.end());
        CHECK(it->second.path == b.call_path(n));
        const std::size_t i = n * nl + l;
        const std::string& v = it->second.value;
        if (std::string(m) == "visits") {
          CHECK(std::stoull(v) == p.visits[i]);
        } else {
          const double want = std::string(m) == "time"       ? p.time_incl[i]
                              : std::string(m) == "min_time" ? p.min_time[i]
                                                             : p.max_time[i];
          CHECK(std::strtod(v.c_str(), nullptr) == want);  // dump prints repr(): exact
        }
      }
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Members of a ustar archive (name → content), reading standard padding.
std::map<std::string, std::string> tar_members(const std::string& archive) {
  std::map<std::string, std::string> out;
  std::size_t pos = 0;
  while (pos + 512 <= archive.size()) {
    const char* h = archive.data() + pos;
    if (h[0] == '\0') break;
    const std::string name(h, ::strnlen(h, 100));
    const std::size_t size = std::strtoull(std::string(h + 124, 12).c_str(), nullptr, 8);
    REQUIRE(std::string(h + 257, 5) == "ustar");
    out[name] = archive.substr(pos + 512, size);
    pos += 512 + (size + 511) / 512 * 512;
  }
  return out;
}

std::uint32_t u32le(const std::string& s, std::size_t off) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[off + static_cast<std::size_t>(i)]);
  return v;
}

/// Row positions listed in a SPARSE `.index` member.
std::vector<std::uint32_t> index_rows(const std::string& idx) {
  REQUIRE(idx.size() >= 22);
  REQUIRE(idx.substr(0, 11) == "CUBEX.INDEX");
  REQUIRE(u32le(idx, 11) == 1);
  REQUIRE(static_cast<int>(idx[17]) == 1);  // SPARSE
  const std::uint32_t n = u32le(idx, 18);
  REQUIRE(idx.size() == 22 + 4 * std::size_t{n});
  std::vector<std::uint32_t> rows;
  for (std::uint32_t r = 0; r < n; ++r) rows.push_back(u32le(idx, 22 + 4 * std::size_t{r}));
  return rows;
}

/// main → {foo → {baz, qux}, bar → {quux}}; `dfs_ids`: ids in pre-order (then the wide order
/// differs from the ids), else ids level by level (then the deep order differs from them).
/// Returns the cnode ids of {main, foo, bar, baz, qux, quux}.
std::vector<std::size_t> three_level_tree(Builder& b, bool dfs_ids) {
  const auto main_r = b.region("main", "main.c", 5, 40);
  const auto foo = b.region("foo"), bar = b.region("bar"), baz = b.region("baz");
  const auto qux = b.region("qux"), quux = b.region("quux");
  std::size_t m, f, r, z, q, u;
  m = b.cnode(main_r, -1);
  if (dfs_ids) {
    f = b.cnode(foo, static_cast<std::int64_t>(m));
    z = b.cnode(baz, static_cast<std::int64_t>(f));
    q = b.cnode(qux, static_cast<std::int64_t>(f));
    r = b.cnode(bar, static_cast<std::int64_t>(m));
    u = b.cnode(quux, static_cast<std::int64_t>(r));
  } else {
    f = b.cnode(foo, static_cast<std::int64_t>(m));
    r = b.cnode(bar, static_cast<std::int64_t>(m));
    z = b.cnode(baz, static_cast<std::int64_t>(f));
    q = b.cnode(qux, static_cast<std::int64_t>(f));
    u = b.cnode(quux, static_cast<std::int64_t>(r));
  }
  return {m, f, r, z, q, u};
}

}  // namespace

TEST_CASE("cube4: three-level tree, one location, pre-order ids", "[cube4][shared-tools]") {
  Builder b;
  const auto ids = three_level_tree(b, true);
  const std::size_t m = ids[0], f = ids[1], r = ids[2], z = ids[3], q = ids[4], u = ids[5];
  b.locations({"Master thread"});
  b.set(m, 0, 1, 0.125);
  b.set(f, 0, 3, 1.5);
  b.set(r, 0, 2, 0.25);
  b.set(z, 0, 7, 0.0625);
  b.set(q, 0, 11, 0.75);
  b.set(u, 0, 13, 2.0);
  b.finish();

  TempDir dir;
  std::string err;
  REQUIRE(cube4::write(dir.cubex(), b.p, &err));
  CHECK(err.empty());
  const Check c = cubex_check(dir.cubex(),
                              "--expect-region main --expect-region foo --expect-region quux "
                              "--expect-locations 1");
  INFO(c.out);
  REQUIRE(c.rc == 0);
  CHECK(c.last_line.rfind("cubex ok: 6 regions, 6 cnodes, 1 locations, 4 metrics (4 with data)", 0) == 0);
  require_all_values(b, c);

  // Spot checks with the values written by hand.
  CHECK(c.cells.at("visits").at({long(f), 0L}).path == "main/foo");
  CHECK(c.cells.at("visits").at({long(f), 0L}).value == "3");
  CHECK(c.cells.at("visits").at({long(u), 0L}).value == "13");
  CHECK(c.cells.at("time").at({long(q), 0L}).path == "main/foo/qux");
  CHECK(c.cells.at("time").at({long(q), 0L}).value == "0.75");
  CHECK(c.cells.at("time").at({long(f), 0L}).value == "2.3125");   // 1.5 + 0.0625 + 0.75
  CHECK(c.cells.at("time").at({long(r), 0L}).value == "2.25");     // 0.25 + 2
  CHECK(c.cells.at("time").at({long(m), 0L}).value == "4.6875");   // program root as given
  CHECK(c.cells.at("max_time").at({long(u), 0L}).value == "2.0");

  // Rows of the INCLUSIVE metric in wide order, the EXCLUSIVE ones in deep order (= ids here).
  const std::string archive = read_file(dir.cubex());
  const auto members = tar_members(archive);
  for (const char* name : {"0.data", "0.index", "1.data", "1.index", "2.data", "2.index",
                           "3.data", "3.index", "anchor.xml"})
    CHECK(members.count(name) == 1);
  CHECK(index_rows(members.at("1.index")) == std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5});
  const std::string& time_data = members.at("1.data");
  REQUIRE(time_data.size() == 10 + 6 * 8);
  double second_row;  // wide position 1 = foo, position 2 = bar (id 4)
  std::memcpy(&second_row, time_data.data() + 10 + 2 * 8, 8);
  CHECK(second_row == 2.25);
  const std::string anchor = members.at("anchor.xml");
  CHECK(anchor.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", 0) == 0);
  CHECK(anchor.find("<cube version=\"4.4\">") != std::string::npos);
  CHECK(anchor.find("<region id=\"0\" mod=\"main.c\" begin=\"5\" end=\"40\">") != std::string::npos);
  CHECK(anchor.size() % 512 != 0);
}

TEST_CASE("cube4: three locations, level-order ids, zero visits on some locations", "[cube4][shared-tools]") {
  Builder b;
  const auto ids = three_level_tree(b, false);
  const std::size_t m = ids[0], f = ids[1], r = ids[2], z = ids[3], q = ids[4], u = ids[5];
  b.locations({"Master thread", "Pthread thread 1", "Pthread thread 2"});
  b.set(m, 0, 1, 0.5);
  b.set(f, 0, 2, 1.0);
  b.set(r, 0, 1, 0.25);
  b.set(z, 0, 4, 0.125);
  b.set(q, 0, 8, 0.1);  // not dyadic: the dump still prints it exactly
  b.set(u, 0, 16, 3.0);
  // Thread 1: main never entered here (visits 0) but its subtree's time counts (like
  // Score-P's thread roots), bar/quux not at all.
  b.set(m, 1, 0, 0.0);
  b.set(f, 1, 5, 0.375);
  b.set(z, 1, 6, 0.625);
  b.set(q, 1, 7, 1.25);
  // Thread 2: only foo/qux.
  b.set(f, 2, 1, 0.0078125);
  b.set(q, 2, 9, 0.5);
  b.finish();
  REQUIRE(b.p.time_incl[b.at(m, 1)] == 2.25);
  REQUIRE(b.p.visits[b.at(r, 2)] == 0);

  TempDir dir;
  std::string err;
  REQUIRE(cube4::write(dir.cubex(), b.p, &err));
  const Check c = cubex_check(dir.cubex(),
                              "--expect-region main --expect-region qux --expect-locations 3");
  INFO(c.out);
  REQUIRE(c.rc == 0);
  CHECK(c.last_line.rfind("cubex ok: 6 regions, 6 cnodes, 3 locations, 4 metrics (4 with data)", 0) == 0);
  require_all_values(b, c);

  CHECK(c.cells.at("visits").at({long(f), 0L}).path == "main/foo");
  CHECK(c.cells.at("visits").at({long(f), 0L}).value == "2");
  CHECK(c.cells.at("visits").at({long(f), 1L}).value == "5");
  CHECK(c.cells.at("visits").at({long(m), 1L}).value == "0");
  CHECK(c.cells.at("time").at({long(m), 1L}).value == "2.25");
  CHECK(c.cells.at("visits").at({long(r), 2L}).value == "0");
  CHECK(c.cells.at("time").at({long(u), 2L}).value == "0.0");
  CHECK(c.cells.at("min_time").at({long(u), 1L}).value == "0.0");
  CHECK(c.cells.at("time").at({long(q), 0L}).path == "main/foo/qux");
  CHECK(c.cells.at("time").at({long(q), 0L}).value == "0.1");
  CHECK(c.cells.at("time").at({long(q), 2L}).value == "0.5");
  CHECK(c.cells.at("time").at({long(f), 2L}).value == "0.5078125");

  // Deep order (EXCLUSIVE rows) = main foo baz qux bar quux = ids 0 1 3 4 2 5: row 2 of
  // visits is baz; dense metrics list every position.
  const auto members = tar_members(read_file(dir.cubex()));
  CHECK(index_rows(members.at("0.index")) == std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5});
  const std::string& vd = members.at("0.data");
  REQUIRE(vd.size() == 10 + 6 * 3 * 8);
  std::uint64_t v;
  std::memcpy(&v, vd.data() + 10 + (2 * 3 + 1) * 8, 8);  // row 2, location 1
  CHECK(v == 6);
}

TEST_CASE("cube4: extra sparse metrics get rows only where non-zero", "[cube4][shared-tools]") {
  Builder b;
  const auto ids = three_level_tree(b, false);
  b.locations({"Master thread", "Pthread thread 1"});
  for (std::size_t c = 0; c < b.p.cnodes.size(); ++c) b.set(c, 0, c + 1, 0.25 * double(c + 1));
  b.finish();
  const std::size_t cells = b.p.cnodes.size() * 2;
  cube4::ExtraMetric sent;
  sent.uniq_name = "bytes_sent";
  sent.descr = "Bytes sent";
  sent.values.assign(cells, 0);
  sent.values[ids[5] * 2 + 1] = 4096;  // quux, location 1: deep position 5
  sent.values[ids[1] * 2 + 0] = 17;    // foo, location 0: deep position 1
  cube4::ExtraMetric recv;
  recv.uniq_name = "bytes received";  // written as bytes_received
  recv.descr = "Bytes received";
  recv.values.assign(cells, 0);
  b.p.extra_metrics = {sent, recv};

  TempDir dir;
  std::string err;
  REQUIRE(cube4::write(dir.cubex(), b.p, &err));
  const Check c = cubex_check(dir.cubex(),
                              "--expect-region main --expect-locations 2 --expect-metric bytes_sent");
  INFO(c.out);
  REQUIRE(c.rc == 0);
  CHECK(c.last_line.rfind("cubex ok: 6 regions, 6 cnodes, 2 locations, 6 metrics (5 with data)", 0) == 0);
  require_all_values(b, c);
  CHECK(c.no_data.count("bytes_received") == 1);
  REQUIRE(c.cells.count("bytes_sent") == 1);
  CHECK(c.cells.at("bytes_sent").at({long(ids[5]), 1L}).value == "4096");
  CHECK(c.cells.at("bytes_sent").at({long(ids[1]), 0L}).value == "17");
  CHECK(c.cells.at("bytes_sent").at({long(ids[2]), 0L}).value == "0");

  const auto members = tar_members(read_file(dir.cubex()));
  CHECK(index_rows(members.at("4.index")) == std::vector<std::uint32_t>{1, 5});
  CHECK(members.at("4.data").size() == 10 + 2 * 2 * 8);
  CHECK(members.count("5.index") == 0);
  CHECK(members.count("5.data") == 0);
  CHECK(members.at("anchor.xml").find("<uniq_name>bytes_received</uniq_name>") != std::string::npos);
}

TEST_CASE("cube4: file/lines and names that need XML escaping", "[cube4][shared-tools]") {
  Builder b;
  const auto main_r = b.region("int main(int, char**)", "src/main&co.cpp", 12, 99);
  const auto less = b.region("bool operator<(A const&, A const&)", "inc/<a>.hpp", 3, 4);
  const auto amp = b.region("a&b");
  const auto quotes = b.region("say \"hi\" 'you' > x");
  b.p.regions[less].canonical = "_ZltRK1AS1_";
  const auto m = b.cnode(main_r, -1);
  const auto l = b.cnode(less, static_cast<std::int64_t>(m));
  const auto a = b.cnode(amp, static_cast<std::int64_t>(m));
  const auto q = b.cnode(quotes, static_cast<std::int64_t>(a));
  b.locations({"Master \"thread\" <0>"});
  b.set(m, 0, 1, 1.0);
  b.set(l, 0, 2, 0.5);
  b.set(a, 0, 3, 0.25);
  b.set(q, 0, 4, 0.125);
  b.finish();
  b.p.process = "Process & co";
  b.p.node = "host<1>";

  TempDir dir;
  std::string err;
  REQUIRE(cube4::write(dir.cubex(), b.p, &err));
  const Check c = cubex_check(dir.cubex(),
                              "--expect-region main --expect-region 'operator<' "
                              "--expect-region 'a&b' --expect-locations 1");
  INFO(c.out);
  REQUIRE(c.rc == 0);
  require_all_values(b, c);
  CHECK(c.cells.at("visits").at({long(q), 0L}).path ==
        "int main(int, char**)/a&b/say \"hi\" 'you' > x");
  CHECK(c.cells.at("visits").at({long(l), 0L}).value == "2");

  const std::string anchor = cube4::anchor_xml(b.p);
  CHECK(anchor.find("<region id=\"1\" mod=\"inc/&lt;a&gt;.hpp\" begin=\"3\" end=\"4\">") !=
        std::string::npos);
  CHECK(anchor.find("<region id=\"0\" mod=\"src/main&amp;co.cpp\" begin=\"12\" end=\"99\">") !=
        std::string::npos);
  CHECK(anchor.find("<name>bool operator&lt;(A const&amp;, A const&amp;)</name>") != std::string::npos);
  CHECK(anchor.find("<mangled_name>_ZltRK1AS1_</mangled_name>") != std::string::npos);
  CHECK(anchor.find("<name>say &quot;hi&quot; &apos;you&apos; &gt; x</name>") != std::string::npos);
  CHECK(anchor.find("<region id=\"2\" mod=\"\" begin=\"-1\" end=\"-1\">") != std::string::npos);
  CHECK(anchor.find("<name>Process &amp; co</name>") != std::string::npos);
  CHECK(anchor.find("<paradigm>compiler</paradigm>") != std::string::npos);
  CHECK(anchor.find("<role>function</role>") != std::string::npos);
}

TEST_CASE("cube4: anchor.xml of exactly k*512 bytes is padded", "[cube4][shared-tools]") {
  Builder b;
  const auto main_r = b.region("main");
  const auto f = b.region("f");
  const auto m = b.cnode(main_r, -1);
  const auto c = b.cnode(f, static_cast<std::int64_t>(m));
  b.locations({"Master thread"});
  b.set(m, 0, 1, 1.0);
  b.set(c, 0, 5, 2.0);
  b.finish();

  std::size_t size = 0;
  bool found = false;
  for (int len = 1; len <= 600 && !found; ++len) {
    b.p.regions[f].name = "f" + std::string(static_cast<std::size_t>(len), 'x');
    size = cube4::anchor_xml(b.p).size();
    found = size % 512 == 0;
  }
  REQUIRE(found);

  TempDir dir;
  std::string err;
  REQUIRE(cube4::write(dir.cubex(), b.p, &err));
  const std::string archive = read_file(dir.cubex());
  const auto members = tar_members(archive);
  REQUIRE(members.count("anchor.xml") == 1);
  CHECK(members.at("anchor.xml").size() == size + 1);
  CHECK(members.at("anchor.xml").back() == '\n');
  for (const auto& kv : members) {
    INFO(kv.first);
    CHECK(kv.second.size() % 512 != 0);
  }
  const Check ck = cubex_check(dir.cubex(), "--expect-region main --expect-region " +
                                                b.p.regions[f].name + " --expect-locations 1");
  INFO(ck.out);
  REQUIRE(ck.rc == 0);
  require_all_values(b, ck);
}

TEST_CASE("cube4: deep call chains are written without recursion", "[cube4]") {
  Builder b;
  const auto main_r = b.region("main");
  const auto rec = b.region("rec");
  b.cnode(main_r, -1);
  for (std::int64_t i = 0; i < 100000; ++i) b.cnode(rec, i);
  b.locations({"Master thread"});
  for (std::size_t c = 0; c < b.p.cnodes.size(); ++c) b.set(c, 0, 1, 1e-6);
  b.finish();
  TempDir dir;
  std::string err;
  REQUIRE(cube4::write(dir.cubex(), b.p, &err));
  const auto members = tar_members(read_file(dir.cubex()));
  CHECK(index_rows(members.at("1.index")).size() == b.p.cnodes.size());
}

TEST_CASE("cube4: errors are one line naming the file", "[cube4]") {
  Builder b;
  const auto main_r = b.region("main");
  b.cnode(main_r, -1);
  b.locations({"Master thread"});
  b.set(0, 0, 1, 1.0);
  b.finish();

  const std::string bad = "/nonexistent-prof-dir/sub/profile.cubex";
  std::string err;
  CHECK_FALSE(cube4::write(bad, b.p, &err));
  INFO(err);
  CHECK(err.find(bad) != std::string::npos);
  CHECK(err.find("No such file or directory") != std::string::npos);
  CHECK(err.find('\n') == std::string::npos);
  CHECK_FALSE(cube4::write(bad, b.p, nullptr));  // no error string wanted: still no crash

  // A directory in the way of the file.
  TempDir dir;
  const std::string as_dir = dir.path + "/profile.cubex";
  fs::create_directory(as_dir);
  err.clear();
  CHECK_FALSE(cube4::write(as_dir, b.p, &err));
  CHECK(err.find(as_dir) != std::string::npos);
  CHECK(err.find('\n') == std::string::npos);
  CHECK_FALSE(fs::exists(as_dir + ".tmp." + std::to_string(::getpid())));

  // A link planted at the temporary name (issue 30, item 9) is not followed: the file is created
  // with O_EXCL|O_NOFOLLOW, the write fails loudly, the link's target is untouched.
  if (fs::exists("/dev/full")) {
    const std::string planted = dir.path + "/planted.cubex";
    const std::string tmp = planted + ".tmp." + std::to_string(::getpid());
    fs::create_symlink("/dev/full", tmp);
    err.clear();
    CHECK_FALSE(cube4::write(planted, b.p, &err));
    CHECK(err == "cannot write CUBE4 profile " + planted + ": File exists");
    CHECK_FALSE(fs::exists(planted));
    CHECK(fs::is_symlink(fs::symlink_status(tmp)));
    CHECK(fs::exists("/dev/full"));
  }

  // A full disk (EFBIG from RLIMIT_FSIZE, which write() treats as one): its size and the fix are
  // named; neither the profile nor the temporary file is left. (Before issue 30 this planted a
  // link to /dev/full, which the writer no longer follows.)
  {
    const std::string full = dir.path + "/full.cubex";
    const std::string tmp = full + ".tmp." + std::to_string(::getpid());
    struct rlimit before;
    REQUIRE(::getrlimit(RLIMIT_FSIZE, &before) == 0);
    struct rlimit small = before;
    small.rlim_cur = 512;
    void (*old_handler)(int) = std::signal(SIGXFSZ, SIG_IGN);
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
    err.clear();
    const bool wrote = cube4::write(full, b.p, &err);
    ::setrlimit(RLIMIT_FSIZE, &before);
    std::signal(SIGXFSZ, old_handler);
    CHECK_FALSE(wrote);
    INFO(err);
    CHECK(err.rfind("cannot write CUBE4 profile " + full + ": File too large (it needs ", 0) == 0);
    CHECK(err.find(" KiB); free space there or set PROF_EXPERIMENT_DIRECTORY to a file system with more room") != std::string::npos);
    CHECK(err.find('\n') == std::string::npos);
    CHECK_FALSE(fs::exists(full));
    CHECK_FALSE(fs::exists(fs::symlink_status(tmp)));
  }

  // Malformed profiles: a second root, a size mismatch.
  const std::string bad_profile = dir.path + "/bad.cubex";
  cube4::Profile two_roots = b.p;
  two_roots.cnodes.push_back({0, -1});
  two_roots.visits.push_back(1);
  two_roots.time_incl.push_back(1);
  two_roots.min_time.push_back(1);
  two_roots.max_time.push_back(1);
  err.clear();
  CHECK_FALSE(cube4::write(bad_profile, two_roots, &err));
  CHECK(err.find(bad_profile) != std::string::npos);
  CHECK(err.find("root") != std::string::npos);
  CHECK(err.find('\n') == std::string::npos);
  CHECK_FALSE(fs::exists(bad_profile));

  cube4::Profile short_time = b.p;
  short_time.time_incl.clear();
  err.clear();
  CHECK_FALSE(cube4::write(bad_profile, short_time, &err));
  CHECK(err.find("time_incl") != std::string::npos);
  CHECK(cube4::anchor_xml(short_time).empty());
}
