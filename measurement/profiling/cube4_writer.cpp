// SPDX-License-Identifier: BSD-3-Clause
// CUBE4 profile writer; see cube4_writer.hpp and shared/CUBE4-FORMAT.md (section numbers below).
#include "measurement/profiling/cube4_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <new>
#include <string>
#include <vector>

#include "measurement/definitions/regions.hpp"

namespace prof::cube4 {
namespace {

// ---------------------------------------------------------------------------------------------
// Input validation
// ---------------------------------------------------------------------------------------------

/// Empty when `p` can be written, otherwise the cause.
std::string validate(const Profile& p) {
  const std::size_t n = p.cnodes.size();
  const std::size_t l = p.locations.size();
  if (p.regions.empty()) return "profile has no regions";
  if (n == 0) return "profile has no call paths";
  if (l == 0) return "profile has no locations";
  if (p.cnodes[0].parent != -1) return "cnode 0 is not the root (its parent is not -1)";
  for (std::size_t i = 0; i < n; ++i) {
    const CallNode& c = p.cnodes[i];
    if (c.region >= p.regions.size())
      return "cnode " + std::to_string(i) + " references region " + std::to_string(c.region) +
             " of " + std::to_string(p.regions.size());
    if (i > 0 && (c.parent < 0 || static_cast<std::uint64_t>(c.parent) >= i))
      return "cnode " + std::to_string(i) + " has parent " + std::to_string(c.parent) +
             " (need exactly one root, cnode 0, and parent index < own index)";
  }
  const std::size_t cells = n * l;
  auto size_check = [&](const char* what, std::size_t got) -> std::string {
    if (got == cells) return {};
    return std::string(what) + " has " + std::to_string(got) + " values, expected " +
           std::to_string(cells) + " (" + std::to_string(n) + " cnodes x " + std::to_string(l) +
           " locations)";
  };
  std::string e;
  if (!(e = size_check("visits", p.visits.size())).empty()) return e;
  if (!(e = size_check("time_incl", p.time_incl.size())).empty()) return e;
  if (!(e = size_check("min_time", p.min_time.size())).empty()) return e;
  if (!(e = size_check("max_time", p.max_time.size())).empty()) return e;
  if (!p.groups.empty()) {
    if (p.location_group.size() != l) return "location_group does not give a group for every location";
    for (std::size_t i = 0; i < l; ++i) {
      if (p.location_group[i] >= p.groups.size()) return "location " + std::to_string(i) + " has no valid group";
      if (i > 0 && p.location_group[i] < p.location_group[i - 1]) return "the locations are not ordered by group";
    }
  }
  for (const ExtraMetric& m : p.extra_metrics) {
    if (m.uniq_name.empty()) return "an extra metric has an empty uniq_name";
    if (!(e = size_check(("metric " + m.uniq_name).c_str(), m.values.size())).empty()) return e;
  }
  return {};
}

// ---------------------------------------------------------------------------------------------
// anchor.xml (§3)
// ---------------------------------------------------------------------------------------------

/// Length of the valid UTF-8 sequence starting at s[i], 0 if invalid.
std::size_t utf8_len(const std::string& s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  std::size_t len;
  std::uint32_t cp;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) { len = 2; cp = c & 0x1F; }
  else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; }
  else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07; }
  else return 0;
  if (i + len > s.size()) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  static const std::uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min_cp[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  if (cp == 0xFFFE || cp == 0xFFFF) return 0;  // not XML characters
  return len;
}

/// XML-escapes `s` for text and attribute values (CW cube_services_escape_to_xml__).
/// Characters XML 1.0 or Cube's scanner cannot carry (control characters, CR, line breaks
/// inside attribute values, invalid UTF-8) become '?' so a strange name cannot break the file.
void append_escaped(std::string& out, const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '&': out += "&amp;"; ++i; continue;
      case '<': out += "&lt;"; ++i; continue;
      case '>': out += "&gt;"; ++i; continue;
      case '"': out += "&quot;"; ++i; continue;
      case '\'': out += "&apos;"; ++i; continue;
      default: break;
    }
    if (c < 0x20 || c == 0x7F) {
      out += c == '\t' ? ' ' : '?';
      ++i;
      continue;
    }
    const std::size_t len = utf8_len(s, i);
    if (len == 0) {
      out += '?';
      ++i;
      continue;
    }
    out.append(s, i, len);
    i += len;
  }
}

struct Xml {
  std::string out;
  Xml& raw(const char* s) { out += s; return *this; }
  Xml& raw(const std::string& s) { out += s; return *this; }
  Xml& esc(const std::string& s) { append_escaped(out, s); return *this; }
  Xml& num(long long v) { out += std::to_string(v); return *this; }
  Xml& attr(const std::string& key, const std::string& value) {
    return raw("<attr key=\"").esc(key).raw("\" value=\"").esc(value).raw("\"/>\n");
  }
  Xml& element(const char* tag, const std::string& text) {
    return raw("<").raw(tag).raw(">").esc(text).raw("</").raw(tag).raw(">\n");
  }
};

enum class Kind { Exclusive, Inclusive };

struct MetricDef {
  const char* uniq;
  const char* disp;
  Kind kind;
  const char* dtype;
  const char* uom;
  const char* url;
  const char* descr;
};

// §5: Score-P's four standard metrics, ids 0..3.
const MetricDef kStandard[4] = {
    {"visits", "Visits", Kind::Exclusive, "UINT64", "occ", "@mirror@scorep_metrics.html#visits",
     "Number of visits"},
    {"time", "Time", Kind::Inclusive, "DOUBLE", "sec", "@mirror@scorep_metrics.html#time",
     "Total CPU allocation time"},
    {"min_time", "Minimum Inclusive Time", Kind::Exclusive, "MINDOUBLE", "sec",
     "@mirror@scorep_metrics.html#time_min_incl", "Minimum inclusive CPU allocation time"},
    {"max_time", "Maximum Inclusive Time", Kind::Exclusive, "MAXDOUBLE", "sec",
     "@mirror@scorep_metrics.html#time_max_incl", "Maximum inclusive CPU allocation time"},
};

/// CubeW/Score-P restrict unique names to [A-Za-z0-9:_=] (CW cube_make_unique_name).
std::string unique_name(const std::string& s) {
  std::string r = s;
  for (char& c : r) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == ':' || c == '_' || c == '=';
    if (!ok) c = '_';
  }
  return r;
}

void metric_xml(Xml& x, std::size_t id, const char* type, const std::string& disp,
                const std::string& uniq, const char* dtype, const std::string& uom,
                const std::string& url, const std::string& descr) {
  x.raw("<metric id=\"").num(static_cast<long long>(id)).raw("\" type=\"").raw(type).raw("\">\n");
  x.element("disp_name", disp).element("uniq_name", uniq).element("dtype", dtype);
  x.element("uom", uom).element("url", url).element("descr", descr);
  x.raw("</metric>\n");
}

/// Children of every cnode in index order (= document order, §3.5).
std::vector<std::vector<std::size_t>> children_of(const Profile& p) {
  std::vector<std::vector<std::size_t>> ch(p.cnodes.size());
  for (std::size_t i = 1; i < p.cnodes.size(); ++i)
    ch[static_cast<std::size_t>(p.cnodes[i].parent)].push_back(i);
  return ch;
}

std::string build_anchor(const Profile& p, const std::vector<std::vector<std::size_t>>& ch) {
  Xml x;
  x.out.reserve(4096 + p.regions.size() * 256 + p.cnodes.size() * 48);
  // CubeW writes 4.7 when the system tree has accelerator types (CUBE4-FORMAT.md).
  bool accelerator = false;
  for (const auto& g : p.groups) accelerator = accelerator || g.type == "accelerator";
  for (const auto& t : p.location_types) accelerator = accelerator || t != "thread";
  x.raw("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\n<cube version=\"").raw(accelerator ? "4.7" : "4.4").raw("\">\n");
  x.attr("CubePL Version", "1.1");
  x.attr("Cube Version", "4.8.2");
  x.attr("Cube anchor.xml syntax version", "4.4");
  x.attr("Creator", p.creator);
  x.attr("CUBE_CT_AGGR", "SUM");

  // §3.4 metrics, ids 0..M-1.
  x.raw("<metrics>\n");
  for (std::size_t id = 0; id < 4; ++id) {
    const MetricDef& m = kStandard[id];
    metric_xml(x, id, m.kind == Kind::Inclusive ? "INCLUSIVE" : "EXCLUSIVE", m.disp, m.uniq,
               m.dtype, m.uom, m.url, m.descr);
  }
  for (std::size_t k = 0; k < p.extra_metrics.size(); ++k) {
    const ExtraMetric& m = p.extra_metrics[k];
    const std::string uniq = unique_name(m.uniq_name);
    metric_xml(x, 4 + k, "EXCLUSIVE", m.disp_name.empty() ? uniq : m.disp_name, uniq, "UINT64",
               m.uom, m.url, m.descr);
  }
  x.raw("</metrics>\n");

  // §3.5 regions 0..R-1, then the call tree (nested, children in index order).
  x.raw("<program>\n");
  for (std::size_t r = 0; r < p.regions.size(); ++r) {
    const Region& g = p.regions[r];
    x.raw("<region id=\"").num(static_cast<long long>(r)).raw("\" mod=\"").esc(g.file);
    x.raw("\" begin=\"").num(g.begin_line).raw("\" end=\"").num(g.end_line).raw("\">\n");
    x.element("name", g.name);
    x.element("mangled_name", g.canonical.empty() ? g.name : g.canonical);
    x.element("paradigm", g.paradigm.empty() ? std::string("unknown") : g.paradigm);
    x.element("role", g.role.empty() ? std::string("unknown") : g.role);
    x.element("url", "").element("descr", regions::throttled_description(g.throttled_visits, g.throttled_mean_ns));
    x.raw("</region>\n");
  }
  // Iterative pre-order with explicit end tags: recursion depth of a call tree is unbounded.
  struct Frame { std::size_t node, next; };
  std::vector<Frame> stack;
  auto open = [&](std::size_t c) {
    x.raw("<cnode id=\"").num(static_cast<long long>(c)).raw("\" calleeId=\"");
    x.num(static_cast<long long>(p.cnodes[c].region)).raw("\">\n");
    stack.push_back({c, 0});
  };
  open(0);
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (f.next < ch[f.node].size()) {
      const std::size_t c = ch[f.node][f.next++];
      open(c);  // invalidates f
    } else {
      x.raw("</cnode>\n");
      stack.pop_back();
    }
  }
  x.raw("</program>\n");

  // §3.6 system tree: machine -> node -> location group (process) -> thread locations.
  x.raw("<system>\n");
  x.raw("<systemtreenode Id=\"0\">\n");
  x.element("name", "machine " + (p.machine.empty() ? std::string("Linux") : p.machine));
  x.element("class", "machine");
  // One process, or a job of several: a node per distinct host (in order of first appearance),
  // its processes' location groups, their locations (Ids = column order).
  std::vector<Profile::Group> groups = p.groups;
  std::vector<std::uint32_t> group_of = p.location_group;
  if (groups.empty()) {
    Profile::Group g;
    g.name = p.process.empty() ? std::string("Process") : p.process;
    g.rank = p.rank;
    g.node = p.node;
    groups.push_back(std::move(g));
    group_of.assign(p.locations.size(), 0);
  }
  std::vector<std::string> nodes;
  for (const auto& g : groups) {
    bool seen = false;
    for (const auto& n : nodes) seen = seen || n == g.node;
    if (!seen) nodes.push_back(g.node);
  }
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    x.raw("<systemtreenode Id=\"").num(static_cast<long long>(n + 1)).raw("\">\n");
    x.element("name", "node " + (nodes[n].empty() ? std::string("unknown") : nodes[n]));
    x.element("class", "node");
    for (std::size_t g = 0; g < groups.size(); ++g) {
      if (groups[g].node != nodes[n]) continue;
      x.raw("<locationgroup Id=\"").num(static_cast<long long>(g)).raw("\">\n");
      x.element("name", groups[g].name.empty() ? std::string("Process") : groups[g].name);
      x.element("rank", std::to_string(groups[g].rank));
      x.element("type", groups[g].type.empty() ? std::string("process") : groups[g].type);
      if (groups[g].creator >= 0 && static_cast<std::size_t>(groups[g].creator) < groups.size())
        x.attr("Creating location group", groups[static_cast<std::size_t>(groups[g].creator)].name);
      std::size_t thread = 0;
      for (std::size_t l = 0; l < p.locations.size(); ++l) {
        if (group_of[l] != g) continue;
        x.raw("<location Id=\"").num(static_cast<long long>(l)).raw("\">\n");
        x.element("name", p.locations[l]);
        x.element("rank", std::to_string(thread++));
        x.element("type", l < p.location_types.size() ? p.location_types[l] : std::string("thread"));
        x.raw("</location>\n");
      }
      x.raw("</locationgroup>\n");
    }
    x.raw("</systemtreenode>\n");
  }
  x.raw("</systemtreenode>\n");
  x.raw("</system>\n");
  x.raw("</cube>\n");
  return std::move(x.out);
}

// ---------------------------------------------------------------------------------------------
// Row enumeration (§4.1)
// ---------------------------------------------------------------------------------------------

/// EXCLUSIVE metrics: pre-order DFS, children in document order.
std::vector<std::size_t> deep_order(const std::vector<std::vector<std::size_t>>& ch) {
  std::vector<std::size_t> order;
  order.reserve(ch.size());
  std::vector<std::size_t> stack{0};
  while (!stack.empty()) {
    const std::size_t n = stack.back();
    stack.pop_back();
    order.push_back(n);
    for (auto it = ch[n].rbegin(); it != ch[n].rend(); ++it) stack.push_back(*it);
  }
  return order;
}

/// INCLUSIVE metrics: wide(root) = [root] + W(root), W(n) = children(n) + W(c1) + ... + W(ck).
std::vector<std::size_t> wide_order(const std::vector<std::vector<std::size_t>>& ch) {
  std::vector<std::size_t> order;
  order.reserve(ch.size());
  order.push_back(0);
  std::vector<std::size_t> pending{0};  // nodes whose W() is still to be emitted
  while (!pending.empty()) {
    const std::size_t n = pending.back();
    pending.pop_back();
    for (std::size_t c : ch[n]) order.push_back(c);
    for (auto it = ch[n].rbegin(); it != ch[n].rend(); ++it) pending.push_back(*it);
  }
  return order;
}

// ---------------------------------------------------------------------------------------------
// .index / .data (§4.2, §4.3), little-endian
// ---------------------------------------------------------------------------------------------

void put_u32(std::string& s, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) s += static_cast<char>((v >> (8 * i)) & 0xFF);
}
void put_u64(std::string& s, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) s += static_cast<char>((v >> (8 * i)) & 0xFF);
}
void put_f64(std::string& s, double d) {
  std::uint64_t v;
  std::memcpy(&v, &d, sizeof v);
  put_u64(s, v);
}

struct Member {
  std::string name, content;
};

/// Appends `<id>.data` and `<id>.index` for one metric. `values` has cnodes x locations
/// entries (index cnode * L + location); `dense`: a row for every cnode, else only rows with
/// a non-zero value. Nothing is appended when no row would be written (all-zero sparse metric).
template <class T, class Put>
void add_metric_files(std::vector<Member>& members, std::size_t id, const std::vector<T>& values,
                      std::size_t nloc, const std::vector<std::size_t>& order, bool dense,
                      Put put) {
  std::vector<std::uint32_t> rows;
  rows.reserve(order.size());
  for (std::size_t pos = 0; pos < order.size(); ++pos) {
    bool keep = dense;
    const std::size_t base = order[pos] * nloc;
    for (std::size_t l = 0; !keep && l < nloc; ++l) keep = values[base + l] != T{};
    if (keep) rows.push_back(static_cast<std::uint32_t>(pos));
  }
  if (rows.empty()) return;
  Member data{std::to_string(id) + ".data", "CUBEX.DATA"};
  data.content.reserve(10 + rows.size() * nloc * 8);
  for (std::uint32_t pos : rows) {
    const std::size_t base = order[pos] * nloc;
    for (std::size_t l = 0; l < nloc; ++l) put(data.content, values[base + l]);
  }
  Member index{std::to_string(id) + ".index", "CUBEX.INDEX"};
  put_u32(index.content, 1);         // endianness word
  index.content += '\0';             // uint16 version 0
  index.content += '\0';
  index.content += static_cast<char>(1);  // SPARSE
  put_u32(index.content, static_cast<std::uint32_t>(rows.size()));
  for (std::uint32_t pos : rows) put_u32(index.content, pos);
  members.push_back(std::move(data));
  members.push_back(std::move(index));
}

// ---------------------------------------------------------------------------------------------
// ustar container (§2)
// ---------------------------------------------------------------------------------------------

constexpr std::size_t kBlock = 512;

/// width - 1 octal digits (zero-filled) and a NUL, like CubeW's "%7.7lo" / "%11.11lo".
/// Callers keep v below 8^(width-1).
void octal(char* field, std::size_t width, unsigned long long v) {
  field[width - 1] = '\0';
  for (std::size_t i = width - 1; i-- > 0; v >>= 3) field[i] = static_cast<char>('0' + (v & 7));
}

std::string tar_header(const std::string& name, std::size_t size, std::time_t mtime) {
  char h[kBlock];
  std::memset(h, 0, sizeof h);
  std::memcpy(h, name.data(), name.size());  // < 100 bytes: "<id>.index" or "anchor.xml"
  octal(h + 100, 8, 0600);                    // mode
  octal(h + 108, 8, 0);                       // uid
  octal(h + 116, 8, 0);                       // gid
  octal(h + 124, 12, size);
  octal(h + 136, 12, static_cast<unsigned long long>(mtime < 0 ? 0 : mtime) & 077777777777ull);
  h[156] = '0';                               // regular file
  std::memcpy(h + 257, "ustar", 6);           // magic incl. NUL
  std::memcpy(h + 263, "00", 2);              // version
  std::memcpy(h + 265, "nouser", 6);
  std::memcpy(h + 297, "users", 5);
  octal(h + 329, 8, 0);                       // devmajor
  octal(h + 337, 8, 0);                       // devminor
  std::memset(h + 148, ' ', 8);
  unsigned sum = 0;
  for (unsigned char c : h) sum += c;
  std::snprintf(h + 148, 8, "%06o", sum);     // 6 digits, NUL, then the space left from above
  h[155] = ' ';
  return std::string(h, sizeof h);
}

class File {
 public:
  /// A new file: O_EXCL|O_NOFOLLOW, so a link planted at the name fails loudly (EEXIST) rather
  /// than being followed (issue 30, item 9).
  explicit File(const std::string& path) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) return;
    f_ = ::fdopen(fd, "wb");
    if (!f_) {
      const int e = errno;
      ::close(fd);
      ::unlink(path.c_str());
      errno = e;
    }
  }
  ~File() {
    if (f_) std::fclose(f_);
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  bool ok() const { return f_ != nullptr; }
  bool put(const char* p, std::size_t n) { return std::fwrite(p, 1, n, f_) == n; }
  bool put(const std::string& s) { return put(s.data(), s.size()); }
  bool close() {
    FILE* f = f_;
    f_ = nullptr;
    return std::fclose(f) == 0;
  }

 private:
  FILE* f_ = nullptr;
};

bool write_impl(const std::string& path, const Profile& p, std::string* error) {
  auto fail = [&](const std::string& cause) {
    if (error) *error = "cannot write CUBE4 profile " + path + ": " + cause;
    return false;
  };
  if (path.empty()) return fail("empty path");
  std::string cause = validate(p);
  if (!cause.empty()) return fail("invalid profile: " + cause);

  const std::size_t nloc = p.locations.size();
  const auto ch = children_of(p);
  const std::vector<std::size_t> deep = deep_order(ch);
  const std::vector<std::size_t> wide = wide_order(ch);

  // Member order as Score-P/CubeW write it (§5): time, max_time, min_time, visits, others,
  // anchor.xml last.
  std::vector<Member> members;
  auto put_d = [](std::string& s, double v) { put_f64(s, v); };
  auto put_u = [](std::string& s, std::uint64_t v) { put_u64(s, v); };
  add_metric_files(members, 1, p.time_incl, nloc, wide, true, put_d);
  add_metric_files(members, 3, p.max_time, nloc, deep, true, put_d);
  add_metric_files(members, 2, p.min_time, nloc, deep, true, put_d);
  add_metric_files(members, 0, p.visits, nloc, deep, true, put_u);
  for (std::size_t k = 0; k < p.extra_metrics.size(); ++k)
    add_metric_files(members, 4 + k, p.extra_metrics[k].values, nloc, deep, false, put_u);

  Member anchor{"anchor.xml", build_anchor(p, ch)};
  if (anchor.content.size() % kBlock == 0) anchor.content += '\n';  // §2 padding quirk
  members.push_back(std::move(anchor));

  for (const Member& m : members) {
    // Cube's tar reader mis-places the next header after a member of k*512 bytes (§2).
    if (m.content.empty() || m.content.size() % kBlock == 0)
      return fail("internal error: member " + m.name + " has size " +
                  std::to_string(m.content.size()));
    if (m.content.size() >= 0x1FFFFFFFFull)
      return fail("member " + m.name + " is too large for a plain ustar header");
  }

  // Written under a temporary name and renamed, so readers never see a partial file.
  const std::string tmp = path + ".tmp." + std::to_string(static_cast<long>(::getpid()));
  File f(tmp);
  if (!f.ok()) return fail(std::strerror(errno));
  const std::time_t now = std::time(nullptr);
  static const char zeros[2 * kBlock] = {};
  bool ok = true;
  for (const Member& m : members) {
    const std::size_t pad = (kBlock - m.content.size() % kBlock) % kBlock;
    ok = ok && f.put(tar_header(m.name, m.content.size(), now)) && f.put(m.content) &&
         f.put(zeros, pad);
  }
  ok = ok && f.put(zeros, 2 * kBlock);  // end of archive
  int err = ok ? 0 : errno;
  if (!f.close() && ok) {
    ok = false;
    err = errno;
  }
  if (ok && std::rename(tmp.c_str(), path.c_str()) != 0) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    std::remove(tmp.c_str());
    if (err == ENOSPC || err == EDQUOT || err == EFBIG) {
      // A full disk: say how much the profile needs, and where else it can go.
      std::uint64_t bytes = 2 * kBlock;
      for (const Member& m : members) bytes += kBlock + (m.content.size() + kBlock - 1) / kBlock * kBlock;
      return fail(std::string(std::strerror(err)) + " (it needs " + std::to_string((bytes + 1023) / 1024) +
                  " KiB); free space there or set PROF_EXPERIMENT_DIRECTORY to a file system with more room");
    }
    return fail(err ? std::strerror(err) : "write error");
  }
  return true;
}

}  // namespace

bool write(const std::string& path, const Profile& profile, std::string* error) {
  const char* cause = "unknown exception";
  try {
    return write_impl(path, profile, error);
  } catch (const std::bad_alloc&) {
    cause = "out of memory";
  } catch (...) {
  }
  try {
    if (error) *error = "cannot write CUBE4 profile " + path + ": " + cause;
  } catch (...) {  // no memory even for the message: leave `error` as it is
  }
  return false;
}

std::string anchor_xml(const Profile& profile, std::string* error) {
  try {
    const std::string cause = validate(profile);
    if (!cause.empty()) {
      if (error) *error = "invalid profile: " + cause;
      return {};
    }
    return build_anchor(profile, children_of(profile));
  } catch (...) {
    try {
      if (error) *error = "cannot build anchor.xml: out of memory";
    } catch (...) {
    }
    return {};
  }
}

}  // namespace prof::cube4
