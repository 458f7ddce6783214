// SPDX-License-Identifier: BSD-3-Clause
// Message output: one write(2) per line so lines of several threads never interleave.
#include "measurement/log.hpp"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace prof::log {

int g_verbose = 0;

namespace {
long g_rank = -1;  // set by the MPI adapter: messages of a job say which rank speaks

// The first warnings and errors, kept for the experiment's prof.run (runtime.cpp): fixed slots,
// so keeping one allocates nothing; a slot is readable once its flag is set.
constexpr unsigned kKeptLines = 32;
constexpr std::size_t kKeptLength = 600;
char g_kept[kKeptLines][kKeptLength];
std::atomic<bool> g_kept_ready[kKeptLines];
std::atomic<unsigned> g_kept_count{0};

void keep(const char* line, std::size_t len) {
  const unsigned i = g_kept_count.fetch_add(1, std::memory_order_relaxed);
  if (i >= kKeptLines) return;
  if (len >= kKeptLength) len = kKeptLength - 1;
  std::memcpy(g_kept[i], line, len);
  g_kept[i][len] = '\0';
  g_kept_ready[i].store(true, std::memory_order_release);
}

void emit(const char* level, const char* fmt, va_list ap) {
  int saved = errno;
  char line[1024];
  int n = g_rank >= 0 ? std::snprintf(line, sizeof line, "prof: rank %ld: %s", g_rank, level)
                      : std::snprintf(line, sizeof line, "prof: %s", level);
  if (n < 0) n = 0;
  int m = std::vsnprintf(line + n, sizeof line - n - 1, fmt, ap);
  if (m < 0) m = 0;
  std::size_t len = static_cast<std::size_t>(n) + static_cast<std::size_t>(m);
  if (len > sizeof line - 2) len = sizeof line - 2;
  if (*level) keep(line, len);
  line[len++] = '\n';
  ssize_t w = ::write(2, line, len);
  (void)w;
  errno = saved;
}
}  // namespace

void set_rank(std::uint32_t rank) { g_rank = static_cast<long>(rank); }

unsigned kept_count() {
  const unsigned n = g_kept_count.load(std::memory_order_relaxed);
  return n < kKeptLines ? n : kKeptLines;
}

const char* kept_line(unsigned i) {
  return i < kKeptLines && g_kept_ready[i].load(std::memory_order_acquire) ? g_kept[i] : nullptr;
}

void error(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  emit("error: ", fmt, ap);
  va_end(ap);
}

void warning(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  emit("warning: ", fmt, ap);
  va_end(ap);
}

void info(int level, const char* fmt, ...) {
  if (g_verbose < level) return;
  va_list ap;
  va_start(ap, fmt);
  emit("", fmt, ap);
  va_end(ap);
}

void fatal(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  emit("error: ", fmt, ap);
  va_end(ap);
  _exit(1);
}

void bug(const char* file, int line, const char* what) {
  char buf[512];
  int n = std::snprintf(buf, sizeof buf, "prof: internal error at %s:%d: %s; please report it\n", file, line, what);
  if (n > 0) { ssize_t w = ::write(2, buf, static_cast<std::size_t>(n)); (void)w; }
  std::abort();
}

}  // namespace prof::log
