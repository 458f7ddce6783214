// SPDX-License-Identifier: BSD-3-Clause
// CUBE4 profile reader; see cube4_reader.hpp and shared/CUBE4-FORMAT.md (section numbers below).
#include "tools/cube4_reader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <limits>
#include <map>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace prof::cube4 {
namespace {

constexpr std::size_t kNone = static_cast<std::size_t>(-1);

/// Thrown inside the reader when the file cannot be read; `read` turns it into the error line.
struct Malformed {
  std::string cause;
};

[[noreturn]] void fail(std::string cause) { throw Malformed{std::move(cause)}; }

/// `s` for an error message: at most `max` bytes, in quotes.
std::string quote(std::string_view s, std::size_t max = 40) {
  if (s.size() <= max) return "'" + std::string(s) + "'";
  return "'" + std::string(s.substr(0, max)) + "...'";
}

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

/// Strict decimal integer with an optional sign, surrounding blanks allowed.
bool parse_int(std::string_view s, std::int64_t* v) {
  s = trim(s);
  bool negative = false;
  if (!s.empty() && (s.front() == '-' || s.front() == '+')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return false;
  std::uint64_t u = 0;
  const std::uint64_t limit = negative ? std::uint64_t{1} << 63 : (std::uint64_t{1} << 63) - 1;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    const unsigned d = static_cast<unsigned>(c - '0');
    if (u > (limit - d) / 10) return false;
    u = u * 10 + d;
  }
  *v = negative ? static_cast<std::int64_t>(0 - u) : static_cast<std::int64_t>(u);
  return true;
}

// ---------------------------------------------------------------------------------------------
// Input file
// ---------------------------------------------------------------------------------------------

class InputFile {
 public:
  explicit InputFile(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) fail(std::strerror(errno));
    struct stat st;
    const char* cause = nullptr;
    if (::fstat(fd_, &st) != 0) cause = std::strerror(errno);
    else if (S_ISDIR(st.st_mode)) cause = "is a directory";
    else if (!S_ISREG(st.st_mode)) cause = "not a regular file";
    if (cause) {
      ::close(fd_);
      fail(cause);
    }
    size_ = static_cast<std::uint64_t>(st.st_size);
  }
  ~InputFile() { ::close(fd_); }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  std::uint64_t size() const { return size_; }

  /// Exactly `n` bytes at `offset`; the caller keeps offset + n <= size().
  void read(std::uint64_t offset, char* buf, std::size_t n) const {
    while (n > 0) {
      const ssize_t got = ::pread(fd_, buf, n, static_cast<off_t>(offset));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) fail(std::string("read error: ") + std::strerror(errno));
      if (got == 0) fail("unexpected end of file (was it truncated while being read?)");
      buf += got;
      n -= static_cast<std::size_t>(got);
      offset += static_cast<std::uint64_t>(got);
    }
  }

 private:
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

// ---------------------------------------------------------------------------------------------
// ustar container (§2)
// ---------------------------------------------------------------------------------------------

constexpr std::size_t kBlock = 512;

struct Member {
  std::uint64_t offset = 0, size = 0;
};

/// A numeric header field: octal digits (leading blanks, ended by NUL or blank) or GNU
/// base-256 (first byte 0x80).
bool header_number(const unsigned char* f, std::size_t width, std::uint64_t* v) {
  std::uint64_t u = 0;
  if (f[0] == 0x80) {
    for (std::size_t i = 1; i < width; ++i) {
      if (u >> 56) return false;
      u = (u << 8) | f[i];
    }
    *v = u;
    return true;
  }
  std::size_t i = 0;
  while (i < width && f[i] == ' ') ++i;
  for (; i < width && f[i] >= '0' && f[i] <= '7'; ++i) {
    if (u >> 60) return false;
    u = (u << 3) | static_cast<unsigned>(f[i] - '0');
  }
  for (; i < width; ++i)
    if (f[i] != '\0' && f[i] != ' ') return false;
  *v = u;
  return true;
}

/// The stored checksum equals the byte sum with the checksum field read as blanks (unsigned,
/// or signed as some old tars computed it).
bool checksum_ok(const unsigned char* h) {
  std::uint64_t stored;
  if (!header_number(h + 148, 8, &stored)) return false;
  long long unsigned_sum = 0, signed_sum = 0;
  for (std::size_t i = 0; i < kBlock; ++i) {
    const bool in_field = i >= 148 && i < 156;
    unsigned_sum += in_field ? ' ' : h[i];
    signed_sum += in_field ? ' ' : static_cast<signed char>(h[i]);
  }
  const auto s = static_cast<long long>(stored);
  return s == unsigned_sum || s == signed_sum;
}

bool all_zero(const unsigned char* b) {
  return std::all_of(b, b + kBlock, [](unsigned char c) { return c == 0; });
}

std::string field_string(const unsigned char* f, std::size_t width) {
  const char* p = reinterpret_cast<const char*>(f);
  return std::string(p, ::strnlen(p, width));
}

constexpr std::uint64_t kUnset = std::numeric_limits<std::uint64_t>::max();

/// The records of a pax extended header ("<len> <key>=<value>\n" ...) that matter here.
void parse_pax(const std::string& data, std::uint64_t at, std::string* path,
               std::uint64_t* size) {
  const std::string where = "pax header at offset " + std::to_string(at);
  std::size_t pos = 0;
  while (pos < data.size() && data[pos] != '\0') {
    const std::size_t blank = data.find(' ', pos);
    std::int64_t len;
    if (blank == std::string::npos ||
        !parse_int(std::string_view(data).substr(pos, blank - pos), &len) || len <= 0 ||
        static_cast<std::uint64_t>(len) > data.size() - pos ||
        blank >= pos + static_cast<std::size_t>(len))
      fail(where + ": malformed record");
    const std::string record =
        data.substr(blank + 1, pos + static_cast<std::size_t>(len) - blank - 1);
    const std::size_t eq = record.find('=');
    if (eq == std::string::npos || record.empty() || record.back() != '\n')
      fail(where + ": malformed record");
    const std::string key = record.substr(0, eq);
    const std::string value = record.substr(eq + 1, record.size() - eq - 2);
    if (key == "path") *path = value;
    if (key == "size") {
      std::int64_t s;
      if (!parse_int(value, &s) || s < 0) fail(where + ": bad size " + quote(value));
      *size = static_cast<std::uint64_t>(s);
    }
    pos += static_cast<std::size_t>(len);
  }
}

class Archive {
 public:
  explicit Archive(const std::string& path) : file_(path) { scan(); }

  const Member* find(const std::string& name) const {
    const auto it = members_.find(name);
    return it == members_.end() ? nullptr : &it->second;
  }
  /// `n` bytes of a member from `offset` on (within the member).
  void read(const Member& m, std::uint64_t offset, char* buf, std::size_t n) const {
    file_.read(m.offset + offset, buf, n);
  }
  std::string read_all(const Member& m) const {
    if (m.size > std::numeric_limits<std::size_t>::max() / 2) throw std::bad_alloc();
    std::string s(static_cast<std::size_t>(m.size), '\0');
    file_.read(m.offset, s.data(), s.size());
    return s;
  }

 private:
  void scan();

  InputFile file_;
  std::map<std::string, Member> members_;
};

void Archive::scan() {
  const std::uint64_t file_size = file_.size();
  if (file_size == 0) fail("not a ustar archive (empty file)");
  if (file_size < kBlock) fail("not a ustar archive (shorter than one tar header)");
  unsigned char h[kBlock];
  std::uint64_t pos = 0;
  std::string long_name, pax_path;  // from GNU/pax extension headers, for the next member
  std::uint64_t pax_size = kUnset;
  while (pos + kBlock <= file_size) {
    file_.read(pos, reinterpret_cast<char*>(h), kBlock);
    if (all_zero(h)) {
      if (pos == 0) fail("not a ustar archive (starts with a zero block)");
      // End of archive, unless it is the extra zero block CubeW writes after a member whose
      // size is a multiple of 512 (§2) and another header follows.
      unsigned char next[kBlock];
      if (pos + 2 * kBlock > file_size) break;
      file_.read(pos + kBlock, reinterpret_cast<char*>(next), kBlock);
      if (all_zero(next)) break;
      pos += kBlock;
      continue;
    }
    const bool magic = std::memcmp(h + 257, "ustar", 5) == 0;
    if (pos == 0 && !magic)
      fail(h[0] == 0x1f && h[1] == 0x8b ? "not a ustar archive (gzip-compressed; Cube reads "
                                          "only uncompressed tar)"
                                        : "not a ustar archive");
    const std::string where = "tar header at offset " + std::to_string(pos);
    if (!magic) fail(where + ": no ustar magic (archive corrupt?)");
    if (!checksum_ok(h)) fail(where + ": checksum mismatch (archive corrupt?)");
    const char type = static_cast<char>(h[156]);
    // pax ('x') and GNU long-name ('L', 'K') headers describe the next entry; a global pax
    // header ('g') has nothing we need.
    const bool extension = type == 'x' || type == 'L' || type == 'K' || type == 'g';
    std::uint64_t size = extension ? kUnset : pax_size;
    if (size == kUnset && !header_number(h + 124, 12, &size))
      fail(where + ": malformed size field");
    std::string name = field_string(h, 100);
    if (h[262] == '\0' && h[345] != '\0') name = field_string(h + 345, 155) + "/" + name;
    if (!extension && !pax_path.empty()) name = pax_path;
    if (!extension && !long_name.empty()) name = long_name;
    const std::uint64_t data = pos + kBlock;
    if (size > file_size - data)
      fail("member " + quote(name) + " truncated: " + std::to_string(size) + " bytes announced, " +
           std::to_string(file_size - data) + " left in the file");
    if (type == 'x' || type == 'L') {
      if (size > (1u << 20)) fail(where + ": oversized extension header");
      const std::string content = read_all(Member{data, size});
      if (type == 'x') parse_pax(content, pos, &pax_path, &pax_size);
      else long_name = content.substr(0, ::strnlen(content.c_str(), content.size()));
    } else if (!extension) {
      if (type == '0' || type == '\0' ||
          type == '7') {  // regular file; others carry nothing for us
        while (name.compare(0, 2, "./") == 0) name.erase(0, 2);
        members_[name] = Member{data, size};
      }
      long_name.clear();
      pax_path.clear();
      pax_size = kUnset;
    }
    pos = data + (size + kBlock - 1) / kBlock * kBlock;
  }
  if (pos < file_size && pos + kBlock > file_size)
    fail("truncated archive: " + std::to_string(file_size - pos) + " bytes of a header at offset " +
         std::to_string(pos));
}

// ---------------------------------------------------------------------------------------------
// XML tokenizer (non-validating; enough for anchor.xml, §3)
// ---------------------------------------------------------------------------------------------

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

/// Appends the character an entity body ("lt", "#60", "#x3C") stands for; false if unknown.
bool append_entity(std::string& out, std::string_view e) {
  static const std::pair<const char*, char> named[] = {
      {"lt", '<'}, {"gt", '>'}, {"amp", '&'}, {"quot", '"'}, {"apos", '\''}};
  for (const auto& n : named)
    if (e == n.first) {
      out += n.second;
      return true;
    }
  if (e.size() < 2 || e[0] != '#') return false;
  const bool hex = e[1] == 'x' || e[1] == 'X';
  const std::string_view digits = e.substr(hex ? 2 : 1);
  if (digits.empty() || digits.size() > 8) return false;
  std::uint32_t cp = 0;
  for (char c : digits) {
    unsigned d;
    if (c >= '0' && c <= '9') d = static_cast<unsigned>(c - '0');
    else if (hex && c >= 'a' && c <= 'f') d = static_cast<unsigned>(c - 'a' + 10);
    else if (hex && c >= 'A' && c <= 'F') d = static_cast<unsigned>(c - 'A' + 10);
    else return false;
    cp = cp * (hex ? 16 : 10) + d;
  }
  if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
  append_utf8(out, cp);
  return true;
}

/// Text or attribute value with entities decoded; an unknown or malformed reference stays
/// as written.
void append_decoded(std::string& out, std::string_view s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '&') {
      // Only the next 12 characters can close a reference: a text full of bare '&' stays linear.
      const std::size_t len = s.substr(i + 1, 12).find(';');
      if (len != std::string_view::npos && append_entity(out, s.substr(i + 1, len))) {
        i += len + 1;
        continue;
      }
    }
    out += s[i];
  }
}

bool is_name_char(char c) {
  return !is_blank(c) && c != '<' && c != '>' && c != '/' && c != '=' && c != '"' &&
         c != '\'' && c != '\0';
}

class XmlReader {
 public:
  enum class Token { Start, End, Text, Eof };
  using Attributes = std::vector<std::pair<std::string, std::string>>;

  explicit XmlReader(std::string_view doc) : doc_(doc) {
    if (doc_.compare(0, 3, "\xEF\xBB\xBF") == 0) pos_ = 3;  // byte order mark
  }

  /// The next token; a self-closing tag gives Start, then End.
  Token next();
  const std::string& name() const { return name_; }  // of Start and End
  const Attributes& attributes() const { return attrs_; }
  const std::string& text() const { return text_; }  // of Text, decoded

  [[noreturn]] void error(const std::string& what) const {
    const auto line =
        1 + std::count(doc_.begin(), doc_.begin() + static_cast<std::ptrdiff_t>(token_), '\n');
    fail("anchor.xml: line " + std::to_string(line) + ": " + what);
  }

 private:
  bool at(std::string_view s) const { return doc_.compare(pos_, s.size(), s) == 0; }
  void skip_blanks() {
    while (pos_ < doc_.size() && is_blank(doc_[pos_])) ++pos_;
  }
  void skip_past(std::string_view end, const char* what) {
    const std::size_t e = doc_.find(end, pos_);
    if (e == std::string_view::npos) error(what);
    pos_ = e + end.size();
  }
  void expect(char c, const char* what) {
    if (pos_ >= doc_.size() || doc_[pos_] != c) error(what);
    ++pos_;
  }
  std::string read_name() {
    const std::size_t begin = pos_;
    while (pos_ < doc_.size() && is_name_char(doc_[pos_])) ++pos_;
    if (pos_ == begin) error("malformed tag");
    return std::string(doc_.substr(begin, pos_ - begin));
  }
  void read_start_tag();
  void skip_declaration();

  std::string_view doc_;
  std::size_t pos_ = 0;
  std::size_t token_ = 0;  // where the current token starts
  bool pending_end_ = false;
  std::string name_, text_;
  Attributes attrs_;
};

XmlReader::Token XmlReader::next() {
  if (pending_end_) {
    pending_end_ = false;
    return Token::End;
  }
  for (;;) {
    token_ = pos_;
    if (pos_ >= doc_.size()) return Token::Eof;
    if (doc_[pos_] != '<') {
      const std::size_t end = std::min(doc_.find('<', pos_), doc_.size());
      text_.clear();
      append_decoded(text_, doc_.substr(pos_, end - pos_));
      pos_ = end;
      return Token::Text;
    }
    if (at("<?")) {
      pos_ += 2;
      skip_past("?>", "unterminated processing instruction");
    } else if (at("<!--")) {
      pos_ += 4;
      skip_past("-->", "unterminated comment");
    } else if (at("<![CDATA[")) {
      pos_ += 9;
      const std::size_t end = doc_.find("]]>", pos_);
      if (end == std::string_view::npos) error("unterminated CDATA section");
      text_.assign(doc_.substr(pos_, end - pos_));
      pos_ = end + 3;
      return Token::Text;
    } else if (at("<!")) {
      skip_declaration();
    } else if (at("</")) {
      pos_ += 2;
      name_ = read_name();
      skip_blanks();
      expect('>', "malformed end tag");
      return Token::End;
    } else {
      ++pos_;
      read_start_tag();
      return Token::Start;
    }
  }
}

void XmlReader::read_start_tag() {
  name_ = read_name();
  attrs_.clear();
  for (;;) {
    skip_blanks();
    if (pos_ >= doc_.size()) error("unterminated <" + name_ + "> tag");
    if (doc_[pos_] == '>') {
      ++pos_;
      return;
    }
    if (doc_[pos_] == '/') {
      ++pos_;
      expect('>', "malformed empty-element tag");
      pending_end_ = true;
      return;
    }
    std::string key = read_name();
    skip_blanks();
    expect('=', "attribute without a value");
    skip_blanks();
    if (pos_ >= doc_.size() || (doc_[pos_] != '"' && doc_[pos_] != '\''))
      error("attribute " + key + " of <" + name_ + "> has no quoted value");
    const char q = doc_[pos_++];
    const std::size_t end = doc_.find(q, pos_);
    if (end == std::string_view::npos) error("unterminated attribute value");
    std::string value;
    append_decoded(value, doc_.substr(pos_, end - pos_));
    pos_ = end + 1;
    attrs_.emplace_back(std::move(key), std::move(value));
  }
}

/// <!DOCTYPE ...> and the like, including an internal subset in brackets.
void XmlReader::skip_declaration() {
  int depth = 0;
  char quote_char = 0;
  for (pos_ += 2; pos_ < doc_.size(); ++pos_) {
    const char c = doc_[pos_];
    if (quote_char) {
      if (c == quote_char) quote_char = 0;
    } else if (c == '"' || c == '\'') {
      quote_char = c;
    } else if (c == '[') {
      ++depth;
    } else if (c == ']') {
      --depth;
    } else if (c == '>' && depth <= 0) {
      ++pos_;
      return;
    }
  }
  error("unterminated <! declaration");
}

// ---------------------------------------------------------------------------------------------
// anchor.xml content (§3.4-§3.6)
// ---------------------------------------------------------------------------------------------

struct MetricDef {
  std::int64_t id = 0;
  std::string kind, uniq, disp, dtype, uom;
};
struct RegionDef {
  std::int64_t id = 0;
  Region region;
  bool has_mangled = false;
};
struct CnodeDef {
  std::int64_t id = 0, callee = 0;
  std::size_t parent = kNone;  // index into Anchor::cnodes
};
struct GroupDef {
  std::string name, type, creator;
  std::int64_t rank = 0;
};
struct LocationDef {
  std::int64_t id = 0;
  std::string name, type;
  std::uint32_t group = 0;
};

struct Anchor {
  std::vector<MetricDef> metrics;
  std::vector<RegionDef> regions;
  std::vector<CnodeDef> cnodes;  // document order = pre-order over the roots in order
  std::vector<GroupDef> groups;
  std::vector<LocationDef> locations;
};

/// What an element means, decided by its name and its parent's role; elements in any other
/// place (attributes, docs, topologies, parameters, unknown ones) are Other and ignored.
enum class Role {
  Other,
  Cube,
  Metrics,
  Metric,
  Program,
  Region,
  Cnode,
  System,
  SystemNode,
  Group,
  Location
};

Role role_of(Role parent, const std::string& name) {
  switch (parent) {
    case Role::Cube:
      if (name == "metrics") return Role::Metrics;
      if (name == "program") return Role::Program;
      if (name == "system") return Role::System;
      break;
    case Role::Metrics:
    case Role::Metric:
      if (name == "metric") return Role::Metric;
      break;
    case Role::Program:
      if (name == "region") return Role::Region;
      if (name == "cnode") return Role::Cnode;
      break;
    case Role::Cnode:
      if (name == "cnode") return Role::Cnode;
      break;
    case Role::System:
      if (name == "systemtreenode") return Role::SystemNode;
      break;
    case Role::SystemNode:
      if (name == "systemtreenode") return Role::SystemNode;
      if (name == "locationgroup") return Role::Group;
      break;
    case Role::Group:
      if (name == "location") return Role::Location;
      break;
    default:
      break;
  }
  return Role::Other;
}

class AnchorParser {
 public:
  explicit AnchorParser(std::string_view doc) : xml_(doc) {}
  Anchor parse();

 private:
  void start();
  void end();
  void leaf(Role parent, const std::string& name);
  const std::string* attribute(const char* key) const;
  std::int64_t int_attribute(const char* key) const;
  std::int64_t int_attribute(const char* key, std::int64_t fallback) const;

  struct Open {
    std::string name;
    Role role;
  };
  XmlReader xml_;
  Anchor a_;
  std::vector<Open> open_;
  std::vector<std::size_t> metrics_, cnodes_;  // open <metric>/<cnode> elements (indexes in a_)
  std::string text_;                           // of the innermost open element so far
};

Anchor AnchorParser::parse() {
  for (;;) {
    switch (xml_.next()) {
      case XmlReader::Token::Eof:
        if (open_.empty()) xml_.error("no <cube> element");
        xml_.error("unexpected end of document: <" + open_.back().name + "> not closed");
      case XmlReader::Token::Text:
        text_ += xml_.text();
        break;
      case XmlReader::Token::Start:
        if (open_.empty() && xml_.name() != "cube")
          xml_.error("root element <" + xml_.name() + "> is not <cube>");
        start();
        break;
      case XmlReader::Token::End:
        end();
        if (open_.empty()) return std::move(a_);  // whatever follows the root is ignored
        break;
    }
  }
}

const std::string* AnchorParser::attribute(const char* key) const {
  for (const auto& kv : xml_.attributes())
    if (kv.first == key) return &kv.second;
  return nullptr;
}

std::int64_t AnchorParser::int_attribute(const char* key) const {
  if (!attribute(key)) xml_.error("<" + xml_.name() + "> without attribute " + key);
  return int_attribute(key, 0);
}

std::int64_t AnchorParser::int_attribute(const char* key, std::int64_t fallback) const {
  const std::string* s = attribute(key);
  if (!s) return fallback;
  std::int64_t v;
  if (!parse_int(*s, &v))
    xml_.error("attribute " + std::string(key) + "=" + quote(*s) + " of <" + xml_.name() +
               "> is not an integer");
  return v;
}

void AnchorParser::start() {
  const Role role = open_.empty() ? Role::Cube : role_of(open_.back().role, xml_.name());
  open_.push_back({xml_.name(), role});
  text_.clear();
  switch (role) {
    case Role::Metric: {
      MetricDef m;
      m.id = int_attribute("id");
      const std::string* type = attribute("type");
      m.kind = type ? std::string(trim(*type)) : "EXCLUSIVE";  // CubeLib's default
      metrics_.push_back(a_.metrics.size());
      a_.metrics.push_back(std::move(m));
      break;
    }
    case Role::Region: {
      RegionDef r;
      r.id = int_attribute("id");
      if (const std::string* mod = attribute("mod")) r.region.file = *mod;
      const std::int64_t begin = int_attribute("begin", -1), end = int_attribute("end", -1);
      const auto fits = [](std::int64_t v) {
        return v >= std::numeric_limits<int>::min() && v <= std::numeric_limits<int>::max();
      };
      if (!fits(begin) || !fits(end)) xml_.error("region line number out of range");
      r.region.begin_line = static_cast<int>(begin);
      r.region.end_line = static_cast<int>(end);
      a_.regions.push_back(std::move(r));
      break;
    }
    case Role::Cnode: {
      CnodeDef c;
      c.id = int_attribute("id");
      c.callee = int_attribute("calleeId");
      c.parent = cnodes_.empty() ? kNone : cnodes_.back();
      cnodes_.push_back(a_.cnodes.size());
      a_.cnodes.push_back(c);
      break;
    }
    case Role::Group:
      a_.groups.emplace_back();
      break;
    case Role::Location: {
      LocationDef l;
      l.id = int_attribute("Id");
      l.group = static_cast<std::uint32_t>(a_.groups.size() - 1);
      a_.locations.push_back(std::move(l));
      break;
    }
    case Role::Other:
      // <attr key="Creating location group" value="MPI Rank 0"/> of an accelerator group.
      if (open_.size() >= 2 && open_[open_.size() - 2].role == Role::Group && xml_.name() == "attr") {
        const std::string* key = attribute("key");
        const std::string* value = attribute("value");
        if (key && value && trim(*key) == "Creating location group") a_.groups.back().creator = *value;
      }
      break;
    default:
      break;
  }
}

void AnchorParser::end() {
  if (open_.empty()) xml_.error("unexpected </" + xml_.name() + ">");
  if (open_.back().name != xml_.name())
    xml_.error("</" + xml_.name() + "> does not close <" + open_.back().name + ">");
  const Role role = open_.back().role;
  if (role == Role::Metric) metrics_.pop_back();
  if (role == Role::Cnode) cnodes_.pop_back();
  if (role == Role::Other && open_.size() >= 2)
    leaf(open_[open_.size() - 2].role, open_.back().name);
  open_.pop_back();
}

/// A child element holding a value of the enclosing metric, region, group or location.
void AnchorParser::leaf(Role parent, const std::string& name) {
  switch (parent) {
    case Role::Metric: {
      MetricDef& m = a_.metrics[metrics_.back()];
      if (name == "disp_name") m.disp = text_;
      else if (name == "uniq_name") m.uniq = trim(text_);
      else if (name == "dtype") m.dtype = trim(text_);
      else if (name == "uom") m.uom = text_;
      break;
    }
    case Role::Region: {
      RegionDef& r = a_.regions.back();
      if (name == "name") r.region.name = text_;
      else if (name == "mangled_name") {
        r.region.canonical = text_;
        r.has_mangled = true;
      }
      else if (name == "paradigm") r.region.paradigm = trim(text_);
      else if (name == "role") r.region.role = trim(text_);
      break;
    }
    case Role::Group: {
      GroupDef& g = a_.groups.back();
      if (name == "name") g.name = text_;
      if (name == "type") g.type = trim(text_);
      if (name == "rank" && !parse_int(text_, &g.rank))
        xml_.error("location group rank " + quote(text_) + " is not an integer");
      break;
    }
    case Role::Location: {
      LocationDef& l = a_.locations.back();
      if (name == "name") l.name = text_;
      if (name == "type") l.type = trim(text_);
      break;
    }
    default:
      break;
  }
}

// ---------------------------------------------------------------------------------------------
// From the anchor to the profile
// ---------------------------------------------------------------------------------------------

/// For each id 0..n-1 the index of the definition carrying it; fails unless the ids are
/// exactly 0..n-1.
template <class Def>
std::vector<std::size_t> dense_ids(const std::vector<Def>& defs, const char* what) {
  const std::size_t n = defs.size();
  std::vector<std::size_t> at(n, kNone);
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t id = defs[i].id;
    if (id < 0 || static_cast<std::uint64_t>(id) >= n)
      fail(std::string("anchor.xml: ") + what + " ids are not 0.." + std::to_string(n - 1) +
           " (found " + what + " " + std::to_string(id) + ")");
    if (at[static_cast<std::size_t>(id)] != kNone)
      fail(std::string("anchor.xml: duplicate ") + what + " id " + std::to_string(id));
    at[static_cast<std::size_t>(id)] = i;
  }
  return at;
}

/// Row enumerations of §4.1 as cnode ids, from the cnodes in document order.
struct RowOrders {
  std::vector<std::uint32_t> deep, wide;
};

RowOrders row_orders(const std::vector<CnodeDef>& cnodes) {
  const std::size_t n = cnodes.size();
  RowOrders o;
  o.deep.reserve(n);
  o.wide.reserve(n);
  std::vector<std::vector<std::size_t>> children(n);
  std::vector<std::size_t> roots;
  for (std::size_t i = 0; i < n; ++i) {
    o.deep.push_back(static_cast<std::uint32_t>(cnodes[i].id));  // document order is pre-order
    (cnodes[i].parent == kNone ? roots : children[cnodes[i].parent]).push_back(i);
  }
  // wide(root) = [root] + W(root), W(n) = children(n) + W(c1) + ... + W(ck); roots in turn.
  std::vector<std::size_t> pending;
  for (std::size_t r : roots) {
    o.wide.push_back(static_cast<std::uint32_t>(cnodes[r].id));
    pending.push_back(r);
    while (!pending.empty()) {
      const std::size_t c = pending.back();
      pending.pop_back();
      for (std::size_t k : children[c]) o.wide.push_back(static_cast<std::uint32_t>(cnodes[k].id));
      pending.insert(pending.end(), children[c].rbegin(), children[c].rend());
    }
  }
  return o;
}

enum class Number { Unsigned, Signed, Float };
struct DataType {
  const char* name;
  std::size_t size;
  Number number;
};

// §6: the scalar types; FLOAT is an 8-byte double in Cube.
const DataType kDataTypes[] = {
    {"DOUBLE", 8, Number::Float},       {"FLOAT", 8, Number::Float},
    {"MINDOUBLE", 8, Number::Float},    {"MAXDOUBLE", 8, Number::Float},
    {"UINT64", 8, Number::Unsigned},    {"INT64", 8, Number::Signed},
    {"INTEGER", 8, Number::Signed},     {"UINT32", 4, Number::Unsigned},
    {"UNSIGNED INT", 4, Number::Unsigned}, {"INT32", 4, Number::Signed},
    {"INT", 4, Number::Signed},         {"UINT16", 2, Number::Unsigned},
    {"INT16", 2, Number::Signed},       {"SHORT INT", 2, Number::Signed},
    {"UINT8", 1, Number::Unsigned},     {"CHAR", 1, Number::Unsigned},
    {"INT8", 1, Number::Signed},
};

const DataType* data_type(const std::string& dtype) {
  for (const DataType& t : kDataTypes)
    if (dtype == t.name) return &t;
  return nullptr;
}

/// An unsigned integer of `size` bytes in the file's byte order.
std::uint64_t load(const unsigned char* p, std::size_t size, bool big_endian) {
  std::uint64_t u = 0;
  for (std::size_t i = 0; i < size; ++i) u = (u << 8) | p[big_endian ? i : size - 1 - i];
  return u;
}

double decode(const unsigned char* p, const DataType& t, bool big_endian) {
  std::uint64_t u = load(p, t.size, big_endian);
  switch (t.number) {
    case Number::Float: {
      double d;
      std::memcpy(&d, &u, sizeof d);
      return d;
    }
    case Number::Signed:
      if (t.size < 8 && ((u >> (8 * t.size - 1)) & 1)) u |= ~std::uint64_t{0} << (8 * t.size);
      return static_cast<double>(static_cast<std::int64_t>(u));
    case Number::Unsigned:
      break;
  }
  return static_cast<double>(u);
}

/// A parsed `<id>.index` (§4.2): the row positions and the byte order of the pair.
struct Index {
  bool big_endian = false;
  std::vector<std::uint32_t> rows;
};

Index parse_index(const std::string& name, const std::string& idx, std::size_t ncnodes) {
  const std::string where = "member " + name + ": ";
  const auto* b = reinterpret_cast<const unsigned char*>(idx.data());
  if (idx.size() < 18 || idx.compare(0, 11, "CUBEX.INDEX") != 0)
    fail(where + "not a CUBE index (no CUBEX.INDEX marker)");
  Index x;
  if (load(b + 11, 4, false) == 1) x.big_endian = false;
  else if (load(b + 11, 4, true) == 1) x.big_endian = true;
  else fail(where + "bad endianness marker");
  const unsigned format = b[17];
  if (format == 3) {  // DENSE: every position, no list
    if (idx.size() != 18)
      fail(where + "DENSE index of " + std::to_string(idx.size()) + " bytes, expected 18");
    x.rows.resize(ncnodes);
    for (std::size_t i = 0; i < ncnodes; ++i) x.rows[i] = static_cast<std::uint32_t>(i);
    return x;
  }
  if (format != 1)
    fail(where + "unsupported index format " + std::to_string(format) + " (only SPARSE and DENSE)");
  if (idx.size() < 22) fail(where + "SPARSE index without a row count");
  const std::uint64_t n = load(b + 18, 4, x.big_endian);
  if (idx.size() != 22 + 4 * n)
    fail(where + std::to_string(idx.size()) + " bytes, expected " + std::to_string(22 + 4 * n) +
         " for " + std::to_string(n) + " rows");
  x.rows.reserve(static_cast<std::size_t>(n));
  for (std::size_t r = 0; r < n; ++r) {
    const std::uint64_t pos = load(b + 22 + 4 * r, 4, x.big_endian);
    if (pos >= ncnodes)
      fail(where + "row position " + std::to_string(pos) + " out of range (" +
           std::to_string(ncnodes) + " cnodes)");
    if (!x.rows.empty() && pos <= x.rows.back())
      fail(where + "row positions not strictly ascending");
    x.rows.push_back(static_cast<std::uint32_t>(pos));
  }
  return x;
}

/// Fills m->values from `<id>.index`/`<id>.data` (§4.2, §4.3); `order` maps row positions to
/// cnode ids for the metric's kind.
void read_values(const Archive& ar, std::int64_t id, const DataType& type,
                 const std::vector<std::uint32_t>& order, std::size_t nloc, ReadMetric* m) {
  const std::string index_name = std::to_string(id) + ".index";
  const std::string data_name = std::to_string(id) + ".data";
  const Member* index_member = ar.find(index_name);
  const Member* data_member = ar.find(data_name);
  m->values.assign(order.size() * nloc, 0.0);
  if (!index_member && !data_member) return;  // a metric without data: all zero
  if (!index_member) fail("member " + index_name + " missing (" + data_name + " exists)");
  if (!data_member) fail("member " + data_name + " missing (" + index_name + " exists)");
  m->has_data = true;
  if (index_member->size > 22 + 4 * (std::uint64_t{1} << 32))
    fail("member " + index_name + ": too large for an index");
  const Index index = parse_index(index_name, ar.read_all(*index_member), order.size());

  const std::string where = "member " + data_name + ": ";
  char marker[11] = {};
  ar.read(*data_member, 0, marker, std::min<std::uint64_t>(sizeof marker, data_member->size));
  if (std::memcmp(marker, "ZCUBEX.DATA", 11) == 0)
    fail(where + "compressed CUBE data is not supported; write the profile without compression "
                 "(CubeW: CUBEW_ZLIB_COMPRESSION=false)");
  if (data_member->size < 10 || std::memcmp(marker, "CUBEX.DATA", 10) != 0)
    fail(where + "not CUBE data (no CUBEX.DATA marker)");
  const std::size_t row_bytes = nloc * type.size;
  const std::uint64_t rows = index.rows.size();
  if (row_bytes != 0 && rows > (std::numeric_limits<std::uint64_t>::max() - 10) / row_bytes)
    fail(where + "size overflow");
  if (data_member->size != 10 + rows * row_bytes)
    fail(where + std::to_string(data_member->size) + " bytes, expected 10 + " +
         std::to_string(rows) + " rows x " + std::to_string(nloc) + " locations x " +
         std::to_string(type.size) + " bytes");

  // Rows in chunks of about 1 MiB, so a large metric is not held twice in memory.
  const std::size_t chunk_rows =
      row_bytes == 0 ? 1 : std::max<std::size_t>(1, (1u << 20) / row_bytes);
  std::vector<unsigned char> buf;
  for (std::size_t r0 = 0; r0 < index.rows.size(); r0 += chunk_rows) {
    const std::size_t count = std::min(chunk_rows, index.rows.size() - r0);
    buf.resize(count * row_bytes);
    ar.read(*data_member, 10 + r0 * row_bytes, reinterpret_cast<char*>(buf.data()), buf.size());
    for (std::size_t r = 0; r < count; ++r) {
      double* out = m->values.data() + std::size_t{order[index.rows[r0 + r]]} * nloc;
      const unsigned char* in = buf.data() + r * row_bytes;
      for (std::size_t l = 0; l < nloc; ++l)
        out[l] = decode(in + l * type.size, type, index.big_endian);
    }
  }
}

/// The groups with their creators resolved by name (§3.6: an accelerator group names the
/// process group that created it).
std::vector<ReadGroup> location_groups(const std::vector<GroupDef>& defs) {
  const std::size_t n = defs.size();
  std::vector<ReadGroup> out(n);
  for (std::size_t g = 0; g < n; ++g) {
    ReadGroup& r = out[g];
    r.name = defs[g].name;
    r.rank = defs[g].rank;
    r.type = defs[g].type;
    r.creator_name = defs[g].creator;
    r.process = static_cast<std::uint32_t>(g);
    if (r.creator_name.empty()) continue;
    // Names need not be unique (hand-made or concatenated files): the nearest group before
    // this one (the writers put a process's accelerator groups after it), else the first after.
    for (std::size_t k = g; k-- > 0 && r.creator < 0;)
      if (defs[k].name == r.creator_name) r.creator = static_cast<std::int64_t>(k);
    for (std::size_t k = g + 1; k < n && r.creator < 0; ++k)
      if (defs[k].name == r.creator_name) r.creator = static_cast<std::int64_t>(k);
  }
  // Follow the chain to a group without a creator; a group on or behind a cycle (only a
  // malformed file has one) is its own process.
  for (std::size_t g = 0; g < n; ++g) {
    std::size_t at = g, steps = 0;
    while (out[at].creator >= 0 && steps++ < n) at = static_cast<std::size_t>(out[at].creator);
    out[g].process = static_cast<std::uint32_t>(out[at].creator >= 0 ? g : at);
  }
  return out;
}

ReadProfile build_profile(Anchor& a, const Archive& ar, const std::vector<std::string>* only) {
  ReadProfile p;

  const std::vector<std::size_t> region_at = dense_ids(a.regions, "region");
  p.regions.resize(a.regions.size());
  for (std::size_t id = 0; id < region_at.size(); ++id) {
    RegionDef& d = a.regions[region_at[id]];
    if (!d.has_mangled) d.region.canonical = d.region.name;  // CubeLib's default
    p.regions[id] = std::move(d.region);
  }

  dense_ids(a.cnodes, "cnode");
  p.cnodes.resize(a.cnodes.size());
  for (const CnodeDef& c : a.cnodes) {
    if (c.callee < 0 || static_cast<std::uint64_t>(c.callee) >= p.regions.size())
      fail("anchor.xml: cnode " + std::to_string(c.id) + " references unknown region " +
           std::to_string(c.callee));
    p.cnodes[static_cast<std::size_t>(c.id)] = CallNode{
        static_cast<std::uint32_t>(c.callee), c.parent == kNone ? -1 : a.cnodes[c.parent].id};
  }
  const RowOrders orders = row_orders(a.cnodes);

  const std::vector<std::size_t> location_at = dense_ids(a.locations, "location");
  p.locations.resize(a.locations.size());
  for (std::size_t id = 0; id < location_at.size(); ++id) {
    LocationDef& d = a.locations[location_at[id]];
    const GroupDef& g = a.groups[d.group];
    p.locations[id] = ReadLocation{std::move(d.name), std::move(d.type), g.rank, g.name, d.group};
  }
  p.groups = static_cast<std::uint32_t>(a.groups.size());
  p.location_groups = location_groups(a.groups);

  std::vector<const MetricDef*> by_id;
  for (const MetricDef& m : a.metrics) by_id.push_back(&m);
  std::sort(by_id.begin(), by_id.end(),
            [](const MetricDef* x, const MetricDef* y) { return x->id < y->id; });
  for (std::size_t i = 1; i < by_id.size(); ++i)
    if (by_id[i]->id == by_id[i - 1]->id)
      fail("anchor.xml: duplicate metric id " + std::to_string(by_id[i]->id));
  for (const MetricDef* d : by_id) {
    const DataType* type = data_type(d->dtype);
    const bool exclusive = d->kind == "EXCLUSIVE";
    if (!type || (!exclusive && d->kind != "INCLUSIVE")) continue;
    // Values take call paths x locations x 8 bytes per metric: read only the ones asked for.
    if (only && std::find(only->begin(), only->end(), d->uniq) == only->end()) continue;
    ReadMetric m;
    m.uniq_name = d->uniq;
    m.disp_name = d->disp;
    m.dtype = d->dtype;
    m.uom = d->uom;
    m.kind = d->kind;
    read_values(ar, d->id, *type, exclusive ? orders.deep : orders.wide, p.locations.size(), &m);
    p.metrics.push_back(std::move(m));
  }
  return p;
}

ReadProfile read_profile(const std::string& path, const std::vector<std::string>* only) {
  const Archive ar(path);
  const Member* anchor = ar.find("anchor.xml");
  if (!anchor) fail("member anchor.xml missing");
  const std::string doc = ar.read_all(*anchor);
  Anchor a = AnchorParser(doc).parse();
  return build_profile(a, ar, only);
}

/// "<path>: <cause>" on one line (control characters from the file become '?').
std::string error_line(const std::string& path, const std::string& cause) {
  std::string s = path + ": " + cause;
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = '?';
  return s;
}

bool is_min_max(const ReadMetric& m) { return m.dtype == "MINDOUBLE" || m.dtype == "MAXDOUBLE"; }

/// Parent of cnode `c` as an index, kNone for a root or an invalid parent.
std::size_t parent_index(const std::vector<CallNode>& cnodes, std::size_t c) {
  const std::int64_t p = cnodes[c].parent;
  if (p < 0 || static_cast<std::uint64_t>(p) >= cnodes.size() || static_cast<std::size_t>(p) == c)
    return kNone;
  return static_cast<std::size_t>(p);
}

}  // namespace

const ReadMetric* ReadProfile::metric(const std::string& uniq_name) const {
  for (const ReadMetric& m : metrics)
    if (m.uniq_name == uniq_name) return &m;
  return nullptr;
}

std::vector<double> ReadProfile::exclusive(const ReadMetric& m) const {
  const std::size_t nloc = locations.size();
  std::vector<double> out = m.values;
  if (m.kind != "INCLUSIVE" || is_min_max(m) || out.size() != cnodes.size() * nloc) return out;
  for (std::size_t c = 0; c < cnodes.size(); ++c) {
    const std::size_t p = parent_index(cnodes, c);
    if (p == kNone) continue;
    for (std::size_t l = 0; l < nloc; ++l) out[p * nloc + l] -= m.values[c * nloc + l];
  }
  return out;
}

std::vector<double> ReadProfile::inclusive(const ReadMetric& m) const {
  const std::size_t n = cnodes.size(), nloc = locations.size();
  std::vector<double> out = m.values;
  if (m.kind != "EXCLUSIVE" || is_min_max(m) || out.size() != n * nloc) return out;
  // Children before parents: reverse pre-order from the roots (cnodes on a parent cycle,
  // which only a hand-made profile can have, are not reached and keep their own values).
  std::vector<std::vector<std::size_t>> children(n);
  std::vector<std::size_t> stack;
  for (std::size_t c = 0; c < n; ++c) {
    const std::size_t p = parent_index(cnodes, c);
    (p == kNone ? stack : children[p]).push_back(c);
  }
  std::vector<std::size_t> preorder;
  preorder.reserve(n);
  while (!stack.empty()) {
    const std::size_t c = stack.back();
    stack.pop_back();
    preorder.push_back(c);
    stack.insert(stack.end(), children[c].begin(), children[c].end());
  }
  for (auto it = preorder.rbegin(); it != preorder.rend(); ++it) {
    const std::size_t p = parent_index(cnodes, *it);
    if (p == kNone) continue;
    for (std::size_t l = 0; l < nloc; ++l) out[p * nloc + l] += out[*it * nloc + l];
  }
  return out;
}

bool read(const std::string& path, ReadProfile* out, std::string* error, const std::vector<std::string>* only) {
  if (out) *out = ReadProfile{};
  try {
    const char* cause = "out of memory";
    try {
      ReadProfile p = read_profile(path, only);
      if (out) *out = std::move(p);
      return true;
    } catch (const Malformed& e) {
      if (error) *error = error_line(path, e.cause);
      return false;
    } catch (const std::bad_alloc&) {
    } catch (const std::exception& e) {
      if (error) *error = error_line(path, e.what());
      return false;
    } catch (...) {
      cause = "unknown error";
    }
    if (error) *error = error_line(path, cause);
  } catch (...) {  // no memory even for the message: leave `error` as it is
  }
  return false;
}

}  // namespace prof::cube4
