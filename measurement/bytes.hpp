// SPDX-License-Identifier: BSD-3-Clause
// A byte stream of native integers, doubles and length-prefixed strings, for what processes of
// one job exchange (unification, profiles); they share the architecture.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace prof::bytes {

class Writer {
 public:
  void u8(std::uint8_t v) { buf_.push_back(static_cast<char>(v)); }
  void u32(std::uint32_t v) { raw(&v, sizeof v); }
  void u64(std::uint64_t v) { raw(&v, sizeof v); }
  void i64(std::int64_t v) { raw(&v, sizeof v); }
  void f64(double v) { raw(&v, sizeof v); }
  void str(const std::string& s) {
    u64(s.size());
    raw(s.data(), s.size());
  }
  void raw(const void* p, std::size_t n) {
    const char* c = static_cast<const char*>(p);
    buf_.insert(buf_.end(), c, c + n);
  }
  std::vector<char>& data() { return buf_; }

 private:
  std::vector<char> buf_;
};

/// Reads what a Writer wrote; any read past the end sets !ok() and yields zeros.
class Reader {
 public:
  Reader(const char* p, std::size_t n) : p_(p), end_(p + n) {}
  bool ok() const { return ok_; }
  bool done() const { return p_ == end_; }
  std::uint8_t u8() { return get<std::uint8_t>(); }
  std::uint32_t u32() { return get<std::uint32_t>(); }
  std::uint64_t u64() { return get<std::uint64_t>(); }
  std::int64_t i64() { return get<std::int64_t>(); }
  double f64() { return get<double>(); }
  std::string str() {
    const std::uint64_t n = u64();
    if (!ok_ || n > left()) {
      ok_ = false;
      return {};
    }
    std::string s(p_, n);
    p_ += n;
    return s;
  }
  /// A count of items of at least `min_item_bytes` each, checked against what is left.
  std::uint64_t count(std::size_t min_item_bytes) {
    const std::uint64_t n = u64();
    if (!ok_ || (min_item_bytes && n > left() / min_item_bytes)) {
      ok_ = false;
      return 0;
    }
    return n;
  }

 private:
  std::uint64_t left() const { return static_cast<std::uint64_t>(end_ - p_); }
  template <class T>
  T get() {
    T v{};
    if (!ok_ || left() < sizeof v) {
      ok_ = false;
      return v;
    }
    std::memcpy(&v, p_, sizeof v);
    p_ += sizeof v;
    return v;
  }
  const char* p_;
  const char* end_;
  bool ok_ = true;
};

}  // namespace prof::bytes
