// SPDX-License-Identifier: BSD-3-Clause
// The exec family (issue 30, item 6). An exec replaces the process image without running its exit
// handlers, so everything measured would be lost: each wrapper first writes the data measured so
// far (runtime::finalize_before_exec), then calls the real function. An exec that fails returns to
// a program that is no longer measured: one warning says so. The variadic execl, execlp and execle
// collect their arguments and call the real execv, execvp and execve.
// Nothing is written in a fork's child (measurement is off there: runtime), nor in a vfork child,
// which shares the parent's memory until its exec: finalizing there would end the parent's
// measurement. glibc's posix_spawn and system() exec inside libc, not through these.
// Compiled a second time with -DPROF_STATIC_WRAP for libprof.a: there the functions are
// __wrap_<name> and call __real_<name> (ld --wrap, passed by prof-wrap for -static links).
#ifndef PROF_STATIC_WRAP
#include <dlfcn.h>
#endif
#include <limits.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "adapters/wrap.hpp"
#include "measurement/compiler.hpp"
#include "measurement/log.hpp"
#include "measurement/runtime.hpp"

namespace {

using execve_fn = int (*)(const char*, char* const[], char* const[]);
using execv_fn = int (*)(const char*, char* const[]);
using fexecve_fn = int (*)(int, char* const[], char* const[]);

#ifndef PROF_STATIC_WRAP
execve_fn r_execve, r_execvpe;
execv_fn r_execv, r_execvp;
fexecve_fn r_fexecve;
#endif

// The process that loaded this image. A vfork child runs in its parent's memory with a pid of its
// own until it execs; getpid() is a system call (glibc caches no pid since 2.25).
pid_t g_pid = 0;
__attribute__((constructor)) void remember_pid() { g_pid = ::getpid(); }

/// Whether `file` names an executable file, searched in PATH when `search` and it has no '/'
/// (as execvp does): an exec that fails at once (no such file, no permission) then leaves the
/// measurement running. Stack buffers only.
bool runnable(const char* file, bool search) {
  if (!file || !*file) return false;
  if (!search || std::strchr(file, '/')) return ::access(file, X_OK) == 0;
  const char* path = std::getenv("PATH");
  if (!path) path = "/bin:/usr/bin";
  const std::size_t len = std::strlen(file);
  char buf[PATH_MAX];
  for (const char* p = path;; ++p) {
    const char* end = std::strchr(p, ':');
    if (!end) end = p + std::strlen(p);
    const std::size_t dir = static_cast<std::size_t>(end - p);
    if (dir + len + 2 <= sizeof buf) {
      std::memcpy(buf, dir ? p : ".", dir ? dir : 1);  // an empty entry is the working directory
      const std::size_t at = dir ? dir : 1;
      buf[at] = '/';
      std::memcpy(buf + at + 1, file, len + 1);
      if (::access(buf, X_OK) == 0) return true;
    }
    if (!*end) return false;
    p = end;
  }
}

/// Before the real exec: true when the data were written (the exec's failure must then be told).
bool before(const char* file, bool search) {
  if (::getpid() != g_pid) return false;  // a vfork child: the parent's memory
  // An exec that will fail (no such file) writes nothing, so the program stays measured; a
  // descriptor (fexecve) is taken as it is.
  if (file && !runnable(file, search)) return false;
  const int saved = errno;
  const bool wrote = prof::runtime::finalize_before_exec();
  errno = saved;
  return wrote;
}

/// After a real exec that returned (failed): one warning, the exec's errno kept. Returns -1.
int failed(bool wrote, const char* fn, const char* file) {
  const int e = errno;
  if (wrote)
    prof::log::warning("%s(\"%s\") failed (%s) after prof had written the data measured so far (exit handlers do not run "
                       "after an exec); the program goes on unmeasured", fn, file ? file : "", std::strerror(e));
  errno = e;
  return -1;
}

/// `p`, hidden from the compiler: glibc declares exec arguments nonnull, but execl(path, NULL) is
/// called (an empty argument vector), so a check for null must not be folded away.
template <class T>
T* opaque(T* p) {
  asm volatile("" : "+r"(p));
  return p;
}

/// The arguments of execl, execlp and execle, from the first after `arg0` to the null pointer,
/// into `argv` (counted by count_args first). `va` is left after the null pointer (execle: envp).
std::size_t count_args(va_list va) {
  std::size_t n = 1;
  while (va_arg(va, const char*)) ++n;
  return n;
}
void collect_args(const char* arg0, va_list* va, char** argv, std::size_t n) {
  argv[0] = const_cast<char*>(arg0);
  for (std::size_t i = 1; i < n; ++i) argv[i] = va_arg(*va, char*);
  argv[n] = nullptr;
  (void)va_arg(*va, char*);  // the null pointer
}

}  // namespace

// Each wrapper below is written once (adapters/wrap.hpp); PROF_REAL(f, slot) is the real f,
// through dlsym(RTLD_NEXT) cached in `slot` (dynamic) or __real_f (static).
#ifdef PROF_STATIC_WRAP
extern "C" {
int __real_execve(const char*, char* const[], char* const[]);
int __real_execv(const char*, char* const[]);
int __real_execvp(const char*, char* const[]);
int __real_execvpe(const char*, char* const[], char* const[]);
int __real_fexecve(int, char* const[], char* const[]);
}
#define PROF_REAL(name, slot) (PROF_STATIC_LISTED(name), &__real_##name)
#else
#define PROF_REAL(name, slot) prof::wrap::next(slot, #name)
#endif

extern "C" {

PROF_API PROF_NO_INSTRUMENT int PROF_WRAPPER_NAME(execve)(const char* path, char* const argv[], char* const envp[]) noexcept {
  const bool wrote = before(path, false);
  PROF_REAL(execve, r_execve)(path, argv, envp);
  return failed(wrote, "execve", path);
}

PROF_API PROF_NO_INSTRUMENT int PROF_WRAPPER_NAME(execv)(const char* path, char* const argv[]) noexcept {
  const bool wrote = before(path, false);
  PROF_REAL(execv, r_execv)(path, argv);
  return failed(wrote, "execv", path);
}

PROF_API PROF_NO_INSTRUMENT int PROF_WRAPPER_NAME(execvp)(const char* file, char* const argv[]) noexcept {
  const bool wrote = before(file, true);
  PROF_REAL(execvp, r_execvp)(file, argv);
  return failed(wrote, "execvp", file);
}

PROF_API PROF_NO_INSTRUMENT int PROF_WRAPPER_NAME(execvpe)(const char* file, char* const argv[], char* const envp[]) noexcept {
  const bool wrote = before(file, true);
  PROF_REAL(execvpe, r_execvpe)(file, argv, envp);
  return failed(wrote, "execvpe", file);
}

PROF_API PROF_NO_INSTRUMENT int PROF_WRAPPER_NAME(fexecve)(int fd, char* const argv[], char* const envp[]) noexcept {
  const bool wrote = before(nullptr, false);
  PROF_REAL(fexecve, r_fexecve)(fd, argv, envp);
  char* const* args = opaque(argv);
  return failed(wrote, "fexecve", args && args[0] ? args[0] : "");
}

// The variadic ones: their arguments on the stack (no malloc: an exec may follow a fork of a
// threaded program), then the real vector form.
PROF_API PROF_NO_INSTRUMENT int PROF_WRAPPER_NAME(execl)(const char* path, const char* arg_given, ...) noexcept {
  const char* arg = opaque(arg_given);
  va_list va;
  va_start(va, arg_given);
  const std::size_t n = arg ? count_args(va) : 0;
  va_end(va);
  auto** argv = static_cast<char**>(__builtin_alloca((n + 1) * sizeof(char*)));
  va_start(va, arg_given);
  if (arg) collect_args(arg, &va, argv, n);
  else argv[0] = nullptr;
  va_end(va);
  const bool wrote = before(path, false);
  PROF_REAL(execv, r_execv)(path, argv);
  return failed(wrote, "execl", path);
}

PROF_API PROF_NO_INSTRUMENT int PROF_WRAPPER_NAME(execlp)(const char* file, const char* arg_given, ...) noexcept {
  const char* arg = opaque(arg_given);
  va_list va;
  va_start(va, arg_given);
  const std::size_t n = arg ? count_args(va) : 0;
  va_end(va);
  auto** argv = static_cast<char**>(__builtin_alloca((n + 1) * sizeof(char*)));
  va_start(va, arg_given);
  if (arg) collect_args(arg, &va, argv, n);
  else argv[0] = nullptr;
  va_end(va);
  const bool wrote = before(file, true);
  PROF_REAL(execvp, r_execvp)(file, argv);
  return failed(wrote, "execlp", file);
}

PROF_API PROF_NO_INSTRUMENT int PROF_WRAPPER_NAME(execle)(const char* path, const char* arg_given, ...) noexcept {
  const char* arg = opaque(arg_given);
  va_list va;
  va_start(va, arg_given);
  const std::size_t n = arg ? count_args(va) : 0;
  va_end(va);
  auto** argv = static_cast<char**>(__builtin_alloca((n + 1) * sizeof(char*)));
  va_start(va, arg_given);
  char* const* envp;
  if (arg) collect_args(arg, &va, argv, n);
  else argv[0] = nullptr;  // execle(path, NULL, envp): the null pointer is `arg` itself
  envp = va_arg(va, char* const*);
  va_end(va);
  const bool wrote = before(path, false);
  PROF_REAL(execve, r_execve)(path, argv, envp);
  return failed(wrote, "execle", path);
}

}  // extern "C"

#ifdef PROF_STATIC_WRAP
// Every exec line of static_wraps.def has its wrapper above.
#define PROF_WRAP_SYMBOL(file, sym) PROF_WRAP_SYMBOL_##file(sym)
#define PROF_WRAP_SYMBOL_pthread(sym)
#define PROF_WRAP_SYMBOL_unwind(sym)
#define PROF_WRAP_SYMBOL_exec(sym) \
  static_assert(std::is_function_v<decltype(__wrap_##sym)>, "static_wraps.def lists " #sym " without a wrapper");
#include "adapters/static_wraps.def"
#endif
