// SPDX-License-Identifier: BSD-3-Clause
// The experiment directory: init-time checks, the claim protocol (experiment_dir.hpp), and the
// paths writers use.
#include "measurement/experiment_dir.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <utility>

#include "measurement/config/config.hpp"
#include "measurement/log.hpp"

namespace prof::experiment_dir {

namespace {

constexpr const char* kLock = "prof.lock";
constexpr const char* kLockPrefix = "prof.lock.";  // the temporary file a claim locks first
constexpr int kMaxTries = 16;        // rounds lost to other runs on the same name
constexpr int kMaxSuffix = 10000;    // <name>-2 ... <name>-9999

/// This run's start (check(), at init), ns since 1970: a stale experiment claimed after it belongs
/// to a run that overlapped this one (0: unknown, check() was not called).
long long g_started_ns = 0;

long long realtime_ns() {
  struct timespec ts {};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

std::string now_stamp() {
  std::time_t t = std::time(nullptr);
  struct tm tmv;
  localtime_r(&t, &tmv);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d_%H%M%S", &tmv);
  return buf;
}

std::string parent_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

/// "exp/" and "exp" are one directory; a trailing '/' would put `-old-...` inside it.
std::string without_trailing_slashes(std::string name) {
  while (name.size() > 1 && name.back() == '/') name.pop_back();
  return name;
}

/// How messages name the directory: by the variable when the user chose it.
std::string who(const std::string& dir, bool configured) {
  return (configured ? "PROF_EXPERIMENT_DIRECTORY=" : "the experiment directory ") + config::quoted(dir);
}

/// "" when the directory `st` describes is safe to write into by name: owned by this process's
/// user and writable by nobody else, so nobody else can plant a symbolic or hard link in it at a
/// name prof is about to create (OTF2 and the CUBE4 writer open their files by path). Else why
/// not, with the fix: one message's tail.
std::string unsafe(const struct stat& st) {
  const uid_t me = ::geteuid();
  if (st.st_uid != me)
    return "is owned by uid " + std::to_string(st.st_uid) + ", not by this user (uid " + std::to_string(me) +
           "); its owner could plant symbolic links in it that prof would follow: use a directory of your own";
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return std::string("is writable by ") + ((st.st_mode & S_IWOTH) ? "all users" : "its group") + " (mode " + mode +
           "); they could plant symbolic links in it that prof would follow: chmod go-w it, or use a directory of your "
           "own";
  }
  return {};
}

/// The directory `dfd` (just opened) is safe to write into; else `why` is set (unsafe()).
bool safe(int dfd, std::string* why) {
  struct stat st;
  if (::fstat(dfd, &st) != 0) {
    *why = std::string("cannot be looked at (") + std::strerror(errno) + "); set PROF_EXPERIMENT_DIRECTORY to a place of your own";
    return false;
  }
  *why = unsafe(st);
  return why->empty();
}

/// Opens the directory `path` itself, not a symbolic link's target.
int open_dir(const std::string& path) {
  return ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
}

/// File systems of the kernel's own (proc, sysfs, ...) that hold no user files, whatever access()
/// says (as root it says yes): the name of the file system, or nullptr.
const char* pseudo_fs(const std::string& path) {
  struct statfs sf;
  if (::statfs(path.c_str(), &sf) != 0) return nullptr;
  switch (static_cast<unsigned long>(sf.f_type)) {
    case 0x9fa0UL: return "proc";
    case 0x62656572UL: return "sysfs";
    case 0x27e0ebUL: return "cgroup";
    case 0x63677270UL: return "cgroup2";
    case 0x64626720UL: return "debugfs";
    case 0x74726163UL: return "tracefs";
    case 0x73636673UL: return "securityfs";
    case 0x1cd1UL: return "devpts";
    case 0xcafe4a11UL: return "bpf";
    case 0x6165676cUL: return "pstore";
    case 0xde5e81e4UL: return "efivarfs";
    case 0x62656570UL: return "configfs";
    case 0x65735543UL: return "fusectl";
    case 0x42494e4dUL: return "binfmt_misc";
    case 0x19800202UL: return "mqueue";
    default: return nullptr;
  }
}

/// The least room even a small experiment takes (prof.cfg and prof.lock, a few KiB; a profile,
/// tens of KiB; an OTF2 archive's definitions): less free at start means a disk already full, worth
/// a warning then rather than an error at the end; not a refusal (space may be freed meanwhile).
constexpr unsigned long long kMinFreeBytes = 256ULL << 10;

/// Warns (one line) when the file system of `path` has less than kMinFreeBytes or no inodes left.
void warn_if_full(const std::string& path) {
  struct statvfs sv;
  if (::statvfs(path.c_str(), &sv) != 0) return;
  const unsigned long long free_bytes = static_cast<unsigned long long>(sv.f_bavail) * sv.f_frsize;
  const bool no_inodes = sv.f_files != 0 && sv.f_favail == 0;
  if (free_bytes >= kMinFreeBytes && !no_inodes) return;
  const std::string room = no_inodes ? "no free inodes" : "only " + std::to_string(free_bytes >> 10) + " KiB free";
  log::warning("%s on the file system of %s, where the experiment directory goes (an experiment needs at least %llu "
               "KiB); free space there or set PROF_EXPERIMENT_DIRECTORY to a file system with more room",
               room.c_str(), config::quoted(path).c_str(), kMinFreeBytes >> 10);
}

enum class Kind {
  Missing,       // no such name
  Symlink,       // a symbolic link (dangling or not): never followed
  Unsafe,        // a directory another user owns or may write into (why: unsafe())
  NotDirectory,  // a file, a socket, ...
  Empty,         // an empty directory: used as it is
  Live,          // a prof experiment whose run goes on (or is starting, or cannot be checked)
  Stale,         // a prof experiment whose run has ended
  Foreign,       // a directory with other content
  Error,         // cannot be looked at (errno in `err`)
};

struct Found {
  Kind kind = Kind::Missing;
  std::string owner;   // Live: who holds it, for the message
  bool data = true;    // Stale: anything besides prof.lock
  int err = 0;
  std::string why;     // Unsafe
  std::string overlap;  // Stale: who wrote it while this run went on ("" for an earlier run)
};

/// 1: locked; 0: another process holds the lock; -1: this file system has no locks (errno).
int lock(int fd) {
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  if (::fcntl(fd, F_SETLK, &fl) == 0) return 1;
  return errno == EACCES || errno == EAGAIN ? 0 : -1;
}

/// The owner line a claim writes into prof.lock:
/// "pid <pid> host <host> since <date>_<time> at <ns since 1970>".
std::string owner_line() {
  return "pid " + std::to_string(::getpid()) + " host " + host_name() + " since " + now_stamp() + " at " +
         std::to_string(realtime_ns()) + "\n";
}

struct Owner {
  long pid = 0;  ///< 0 when unreadable
  std::string host;
  long long at_ns = 0;  ///< when it claimed; 0: not said (a prof before this field)
};

Owner read_owner(int fd) {
  char buf[512] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return {};
  Owner o;
  char host[256] = {};
  const int got = std::sscanf(buf, "pid %ld host %255s since %*s at %lld", &o.pid, host, &o.at_ns);
  if (got < 2) return {};
  o.host = host;
  return o;
}

/// Why a stale experiment must not be moved aside: it was claimed while this run went on, by
/// this very process before it called exec (same pid: a name with the pid can recur), or by a run
/// that began after this one (a program this one started with posix_spawn, vfork or fork+exec; a
/// job's other run). Renaming it would take the name its own run reported. "" for an earlier run.
std::string overlapping(const Owner& o) {
  if (o.pid == ::getpid() && o.host == host_name()) return "this process before it called exec";
  if (g_started_ns != 0 && o.at_ns >= g_started_ns)
    return "pid " + std::to_string(o.pid) + " on " + o.host + ", a run that began after this one";
  return {};
}

/// Makes prof.lock in the directory `dfd`, locked before its name exists (see the header).
/// Returns its descriptor, or -1 with errno (EEXIST: another run has it).
int make_lock(int dfd) {
  const std::string tmp = kLockPrefix + std::to_string(::getpid());
  const std::string line = owner_line();
  // O_EXCL: a name left by a run of this pid that was killed is removed first, never opened
  // (it could be a link to anywhere).
  const int create = O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW;
  int fd = ::openat(dfd, tmp.c_str(), create, 0644);
  if (fd < 0 && errno == EEXIST && ::unlinkat(dfd, tmp.c_str(), 0) == 0) fd = ::openat(dfd, tmp.c_str(), create, 0644);
  if (fd < 0) return -1;
  lock(fd);  // without locks (some network file systems) the owner line decides (lock_state)
  bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  if (ok && ::linkat(dfd, tmp.c_str(), dfd, kLock, 0) == 0) {
    ::unlinkat(dfd, tmp.c_str(), 0);
    return fd;
  }
  const int e = ok ? errno : ENOSPC;
  ::unlinkat(dfd, tmp.c_str(), 0);
  ::close(fd);
  if (!ok || e == EEXIST) {
    errno = e;
    return -1;
  }
  // No hard links on this file system: create the name itself. Until the owner line is written
  // the empty file tells others that a run is starting (lock_state).
  fd = ::openat(dfd, kLock, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return -1;
  lock(fd);
  if (::write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
    const int we = errno;
    ::unlinkat(dfd, kLock, 0);
    ::close(fd);
    errno = we;
    return -1;
  }
  return fd;
}

/// Is the run that made dfd's prof.lock still going on?
Found lock_state(int dfd) {
  Found f;
  int fd = ::openat(dfd, kLock, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    // Gone since the directory was read: moved aside by another run. Treated as live, so the
    // caller looks again rather than acting on it.
    f.kind = Kind::Live;
    f.owner = "another run";
    return f;
  }
  const Owner o = read_owner(fd);
  const long pid = o.pid;
  const std::string& host = o.host;
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  const bool have_locks = ::fcntl(fd, F_GETLK, &fl) == 0;
  const int lock_errno = errno;
  ::close(fd);  // this process holds no lock on it (it never looks at its own directory)
  const std::string named = pid ? "pid " + std::to_string(pid) + " on " + host : "a run that is starting";
  if (have_locks) {
    f.kind = fl.l_type == F_UNLCK && pid ? Kind::Stale : Kind::Live;
    f.owner = named;
    if (f.kind == Kind::Stale) f.overlap = overlapping(o);
    return f;
  }
  // No locks here: a run on this host that no longer exists has ended; anything else may be live.
  if (pid && host == host_name() && (pid == ::getpid() || (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH))) {
    f.kind = Kind::Stale;
    f.overlap = overlapping(o);
    return f;
  }
  f.kind = Kind::Live;
  f.owner = named + " (file locks are not available here: " + std::strerror(lock_errno) + ")";
  return f;
}

/// What is at `path` now.
Found inspect(const std::string& path) {
  Found f;
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    const int e = errno;
    // A missing or unusable parent (ENOTDIR: a file) is reported as the parent's problem.
    if (e == ENOENT || e == ENOTDIR) return f;  // Missing
    f.kind = Kind::Error;
    f.err = e;
    return f;
  }
  if (S_ISLNK(st.st_mode)) {
    f.kind = Kind::Symlink;
    return f;
  }
  if (!S_ISDIR(st.st_mode)) {
    f.kind = Kind::NotDirectory;
    return f;
  }
  const int dfd = open_dir(path);
  if (dfd >= 0 && !safe(dfd, &f.why)) {
    // Another user's directory is neither used nor renamed, whatever it holds.
    f.kind = Kind::Unsafe;
    ::close(dfd);
    return f;
  }
  const int list_fd = dfd < 0 ? -1 : ::openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR* d = list_fd < 0 ? nullptr : ::fdopendir(list_fd);
  if (!d) {
    f.kind = Kind::Error;
    f.err = errno;
    if (list_fd >= 0) ::close(list_fd);
    if (dfd >= 0) ::close(dfd);
    return f;
  }
  bool has_lock = false, starting = false, other = false;
  while (const dirent* e = ::readdir(d)) {
    const char* n = e->d_name;
    if (std::strcmp(n, ".") == 0 || std::strcmp(n, "..") == 0) continue;
    if (std::strcmp(n, kLock) == 0) has_lock = true;
    else if (std::strncmp(n, kLockPrefix, std::strlen(kLockPrefix)) == 0) starting = true;
    else other = true;
  }
  ::closedir(d);
  // Only prof.lock proves a prof experiment (every run since the claim protocol leaves it, with
  // its owner line): prof.cfg alone may be any program's file, and its directory the program's own.
  if (has_lock) {
    f = lock_state(dfd);
    f.data = other || starting;
  } else if (starting) {
    f.kind = Kind::Live;  // a run between its mkdir and its prof.lock
    f.owner = "a run that is starting";
  } else {
    f.kind = other ? Kind::Foreign : Kind::Empty;
  }
  ::close(dfd);
  return f;
}

std::string not_directory_message(const std::string& dir, bool configured) {
  return who(dir, configured) +
         " exists and is not a directory; prof leaves it alone (it renames only its own experiment directories): choose "
         "another name";
}

std::string foreign_message(const std::string& dir, bool configured) {
  return who(dir, configured) +
         " is a directory that is not a prof experiment (no prof.lock in it); prof leaves it alone (it "
         "renames only its own experiment directories): choose another name, or an empty directory";
}

std::string symlink_message(const std::string& dir, bool configured) {
  return who(dir, configured) +
         " is a symbolic link; prof does not follow it (whoever can change the link could send the experiment elsewhere): "
         "set PROF_EXPERIMENT_DIRECTORY to the directory itself";
}

std::string unsafe_message(const std::string& dir, bool configured, const std::string& why) {
  return who(dir, configured) + " " + why;
}

std::string exists_message(const std::string& dir, bool configured) {
  return who(dir, configured) + " exists and PROF_OVERWRITE_EXPERIMENT_DIRECTORY=false; remove it or choose another name";
}

std::string cannot_create_message(const std::string& dir, int err) {
  return "cannot create the experiment directory " + config::quoted(dir) + " (" + std::strerror(err) +
         "); set PROF_EXPERIMENT_DIRECTORY to a writable place";
}

void fill(Claim* out, const std::string& name, int dfd, int lfd) {
  out->name = name;
  out->dir_fd = dfd;
  out->lock_fd = lfd;
  struct stat st;
  if (::fstat(dfd, &st) == 0) {
    out->dev = st.st_dev;
    out->ino = st.st_ino;
  }
}

enum Outcome { kTaken, kLost, kFailed };  // kLost: the name is (now) another run's; kFailed: errno

/// A new directory of that name, claimed. Made writable by its owner only (0755 less the umask),
/// and checked once open (in a parent others may write to, the name could have been replaced).
/// kFailed: `error` set.
Outcome try_new(const std::string& path, bool configured, Claim* out, std::string* error) {
  if (::mkdir(path.c_str(), 0755) != 0) {
    if (errno == EEXIST) return kLost;
    *error = cannot_create_message(path, errno);
    return kFailed;
  }
  const int dfd = open_dir(path);
  if (dfd < 0) {
    if (errno == ENOENT || errno == ELOOP || errno == ENOTDIR) return kLost;  // replaced since: look again
    *error = cannot_create_message(path, errno);
    return kFailed;
  }
  std::string why;
  if (!safe(dfd, &why)) {
    ::close(dfd);
    *error = unsafe_message(path, configured, why);
    return kFailed;
  }
  const int lfd = make_lock(dfd);
  if (lfd < 0) {
    const int e = errno;
    ::close(dfd);
    if (e != EEXIST) ::rmdir(path.c_str());  // nothing of ours is left behind
    if (e == EEXIST) return kLost;
    *error = cannot_create_message(path, e);
    return kFailed;
  }
  fill(out, path, dfd, lfd);
  return kTaken;
}

/// An existing empty directory of this user's, claimed where it is. kFailed: `error` set.
Outcome adopt(const std::string& path, bool configured, Claim* out, std::string* error) {
  const int dfd = open_dir(path);
  if (dfd < 0 && (errno == ENOENT || errno == ELOOP || errno == ENOTDIR)) return kLost;  // changed since: look again
  std::string why;
  if (dfd >= 0 && !safe(dfd, &why)) {
    ::close(dfd);
    *error = unsafe_message(path, configured, why);
    return kFailed;
  }
  const int lfd = dfd < 0 ? -1 : make_lock(dfd);
  if (lfd < 0) {
    const int e = errno;
    if (dfd >= 0) ::close(dfd);
    if (e == EEXIST) return kLost;
    *error = "cannot write into the experiment directory " + config::quoted(path) + " (" + std::strerror(e) +
             "); set PROF_EXPERIMENT_DIRECTORY to a writable place";
    return kFailed;
  }
  fill(out, path, dfd, lfd);
  return kTaken;
}

/// A stale experiment of this user's: its lock is taken, then, while the
/// name still leads to that lock, it is renamed aside, or reused when it holds nothing but
/// prof.lock (a run that wrote nothing). kTaken: reused (out filled); kLost: moved aside, or
/// another run was quicker: look again; kFailed: `error` set.
Outcome take_stale(const std::string& dir, bool configured, bool data, Claim* out, std::string* error) {
  const int dfd = open_dir(dir);
  if (dfd < 0) {
    if (errno == ENOENT || errno == ELOOP || errno == ENOTDIR) return kLost;
    *error = "cannot open the existing experiment directory " + config::quoted(dir) + " (" + std::strerror(errno) +
             "); remove it or choose another name";
    return kFailed;
  }
  std::string why;
  if (!safe(dfd, &why)) {
    ::close(dfd);
    *error = unsafe_message(dir, configured, why);
    return kFailed;
  }
  int lfd = ::openat(dfd, kLock, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  if (lfd >= 0) {
    if (lock(lfd) == 0) {  // another run took it meanwhile
      ::close(lfd);
      ::close(dfd);
      return kLost;
    }
  } else if (errno == ENOENT) {  // moved aside by another run since it was looked at
    ::close(dfd);
    return kLost;
  } else {
    *error = "cannot move the existing experiment directory " + config::quoted(dir) + " aside (its prof.lock: " +
             std::strerror(errno) + "); remove it or choose another name";
    ::close(dfd);
    return kFailed;
  }
  // Another run may have moved this directory aside and made a new one of the same name since
  // we looked: act only while the name leads to the lock we hold.
  struct stat held, now;
  const bool same = ::fstat(lfd, &held) == 0 && ::stat((dir + "/" + kLock).c_str(), &now) == 0 &&
                    held.st_dev == now.st_dev && held.st_ino == now.st_ino;
  if (!same) {
    ::close(lfd);
    ::close(dfd);
    return kLost;
  }
  if (!data) {
    const std::string line = owner_line();
    if (::ftruncate(lfd, 0) == 0 && ::pwrite(lfd, line.data(), line.size(), 0) == static_cast<ssize_t>(line.size())) {
      fill(out, dir, dfd, lfd);
      return kTaken;
    }
  }
  const std::string aside = dir + "-old-" + now_stamp() + "_" + std::to_string(::getpid());
  if (::rename(dir.c_str(), aside.c_str()) != 0) {
    *error = "cannot move the existing experiment directory " + config::quoted(dir) + " aside (" + std::strerror(errno) +
             "); remove it or choose another name";
    ::close(lfd);
    ::close(dfd);
    return kFailed;
  }
  ::close(lfd);
  ::close(dfd);
  log::info(1, "moved the existing experiment directory %s to %s", config::quoted(dir).c_str(), config::quoted(aside).c_str());
  return kLost;
}

}  // namespace

std::string default_name() { return "prof-" + now_stamp() + "_" + std::to_string(::getpid()); }

std::string check(const std::string& name, bool overwrite) {
  if (g_started_ns == 0) g_started_ns = realtime_ns();
  const std::string dir = name.empty() ? name : without_trailing_slashes(name);
  bool needs_parent = true;  // a new directory, or a new name beside it
  if (!dir.empty()) {
    const Found f = inspect(dir);
    switch (f.kind) {
      case Kind::Missing:
        break;
      case Kind::NotDirectory:
        return not_directory_message(dir, true);
      case Kind::Symlink:
        return symlink_message(dir, true);
      case Kind::Unsafe:
        return unsafe_message(dir, true, f.why);
      case Kind::Foreign:
        return foreign_message(dir, true);
      case Kind::Error:
        return "cannot look at the experiment directory " + config::quoted(dir) + " (" + std::strerror(f.err) +
               "); set PROF_EXPERIMENT_DIRECTORY to a writable place";
      case Kind::Empty:
        if (::access(dir.c_str(), W_OK | X_OK) != 0)
          return "cannot write into the experiment directory " + config::quoted(dir) + " (" + std::strerror(errno) +
                 "); set PROF_EXPERIMENT_DIRECTORY to a writable place";
        if (const char* fs = pseudo_fs(dir))
          return "cannot write into the experiment directory " + config::quoted(dir) + " (it is on " + fs +
                 ", the kernel's own file system); set PROF_EXPERIMENT_DIRECTORY to a writable place";
        needs_parent = false;
        warn_if_full(dir);
        break;
      case Kind::Live:
      case Kind::Stale:
        // This process's own experiment before an exec is kept, whatever `overwrite` says: this
        // run takes <name>-2 (claim).
        if (!overwrite && f.overlap.empty()) return exists_message(dir, true);
        break;
    }
  }
  if (!needs_parent) return {};
  const std::string parent = dir.empty() ? "." : parent_of(dir);
  struct stat st;
  int e = 0;
  if (::stat(parent.c_str(), &st) != 0) e = errno;
  else if (!S_ISDIR(st.st_mode)) e = ENOTDIR;
  else if (::access(parent.c_str(), W_OK | X_OK) != 0) e = errno;
  if (e)
    return "cannot create the experiment directory in " + config::quoted(parent) + " (" + std::strerror(e) +
           "); set PROF_EXPERIMENT_DIRECTORY to a writable place";
  // As root, access() says yes for /proc; the mkdir at the end would fail and the data be lost.
  if (const char* fs = pseudo_fs(parent))
    return "cannot create the experiment directory in " + config::quoted(parent) + " (it is " + fs +
           ", the kernel's own file system); set PROF_EXPERIMENT_DIRECTORY to a writable place";
  warn_if_full(parent);
  return {};
}

bool claim(const std::string& name, bool overwrite, Claim* out, std::string* error, std::string* notice) {
  const bool configured = !name.empty();
  const std::string dir = configured ? without_trailing_slashes(name) : default_name();
  std::string owner = "other runs";
  std::string overlap;  // the name holds the finished experiment of a run that overlapped this one
  bool live = false;
  for (int round = 0; round < kMaxTries && !live; ++round) {
    const Outcome o = try_new(dir, configured, out, error);
    if (o == kTaken) return true;
    if (o == kFailed) return false;
    const Found f = inspect(dir);
    Outcome next = kLost;
    switch (f.kind) {
      case Kind::Missing:  // moved aside by another run since: try again
        continue;
      case Kind::NotDirectory:
        *error = not_directory_message(dir, configured);
        return false;
      case Kind::Symlink:
        *error = symlink_message(dir, configured);
        return false;
      case Kind::Unsafe:
        *error = unsafe_message(dir, configured, f.why);
        return false;
      case Kind::Foreign:
        *error = foreign_message(dir, configured);
        return false;
      case Kind::Error:
        *error = "cannot look at the experiment directory " + config::quoted(dir) + " (" + std::strerror(f.err) +
                 "); set PROF_EXPERIMENT_DIRECTORY to a writable place";
        return false;
      case Kind::Empty:
        next = adopt(dir, configured, out, error);
        if (next == kFailed) return false;
        break;
      case Kind::Live:
        if (!overwrite) {
          *error = exists_message(dir, configured);
          return false;
        }
        owner = f.owner;
        live = true;  // never touched: this run takes a name of its own below
        continue;
      case Kind::Stale:
        if (!f.overlap.empty()) {
          // Never moved aside, whatever `overwrite` says: nothing is overwritten by a new name.
          overlap = f.overlap;
          live = true;
          continue;
        }
        if (!overwrite) {
          *error = exists_message(dir, configured);
          return false;
        }
        next = take_stale(dir, configured, f.data, out, error);
        if (next == kFailed) return false;
        break;
    }
    if (next == kTaken) return true;
  }
  // The name belongs to a run that goes on (a job array with one fixed name): the first free
  // <name>-<n>, created new, never an existing one.
  for (int n = 2; n < kMaxSuffix; ++n) {
    const std::string alt = dir + "-" + std::to_string(n);
    const Outcome o = try_new(alt, false, out, error);
    if (o == kTaken) {
      if (overlap.empty())
        *notice = who(dir, configured) + " is in use by another run (" + owner + "); this run writes to " +
                  config::quoted(alt);
      else if (configured)
        *notice = who(dir, configured) + " holds the finished experiment of " + overlap + "; it is kept, and this run writes to " +
                  config::quoted(alt) + " (give each program its own PROF_EXPERIMENT_DIRECTORY to choose the names)";
      else  // a name prof chose: nothing the user asked for is changed
        log::info(1, "%s holds the finished experiment of %s; it is kept, and this run writes to %s", who(dir, false).c_str(), overlap.c_str(),
                  config::quoted(alt).c_str());
      return true;
    }
    if (o == kFailed) return false;
  }
  *error = who(dir, configured) + " and " + config::quoted(dir + "-2") + " to " +
           config::quoted(dir + "-" + std::to_string(kMaxSuffix - 1)) + " are all taken; choose another name";
  return false;
}

bool open_claimed(const std::string& name, Claim* out, std::string* error) {
  out->name = name;
  const int dfd = open_dir(name);
  if (dfd < 0) {
    *error = "cannot open the experiment directory " + config::quoted(name) + " (" + std::strerror(errno) + ")";
    return false;
  }
  std::string why;
  if (!safe(dfd, &why)) {
    ::close(dfd);
    *error = unsafe_message(name, false, why);
    return false;
  }
  fill(out, name, dfd, -1);
  return true;
}

std::string io_path(const Claim& claim) {
  if (claim.dir_fd >= 0) {
    // The descriptor's own name for the directory, valid across renames; checked each time, in
    // case the program closed the descriptor and the number now means something else.
    const std::string path = "/proc/self/fd/" + std::to_string(claim.dir_fd);
    struct stat st;
    if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_dev == claim.dev && st.st_ino == claim.ino)
      return path;
  }
  return claim.name;
}

std::string readable(const Claim& claim, std::string text) {
  if (claim.dir_fd < 0) return text;
  const std::string path = "/proc/self/fd/" + std::to_string(claim.dir_fd);
  for (std::size_t at = text.find(path); at != std::string::npos; at = text.find(path, at + claim.name.size()))
    text.replace(at, path.size(), claim.name);
  return text;
}

namespace {
/// Where `file` of the claim is opened: the claim's descriptor while it is still the claimed
/// directory (the program may close it and the number be reused), with `file` in *rel; else the
/// working directory, with the directory's name before `file`.
int base_of(const Claim& claim, const std::string& file, std::string* rel) {
  struct stat st;
  if (claim.dir_fd >= 0 && ::fstat(claim.dir_fd, &st) == 0 && S_ISDIR(st.st_mode) && st.st_dev == claim.dev &&
      st.st_ino == claim.ino) {
    *rel = file;
    return claim.dir_fd;
  }
  *rel = claim.name + "/" + file;
  return AT_FDCWD;
}
}  // namespace

std::string file_error(const Claim& claim, const std::string& file, int err, bool in_claim) {
  const std::string path = config::quoted(in_claim ? claim.name + "/" + file : file);
  if (err == EEXIST || err == ELOOP)
    return "cannot create " + path + ": " + (err == ELOOP ? "a symbolic link" : "another file") +
           " is in its place, and prof neither follows links nor writes into files it did not make: remove it (and check "
           "who else writes into the directory)";
  return "cannot create " + path + " (" + std::strerror(err) + ")";
}

std::string write_file(const Claim& claim, const std::string& file, const std::string& data) {
  std::string rel;
  const int base = base_of(claim, file, &rel);
  const std::string suffix = ".tmp." + std::to_string(::getpid());
  const std::string tmp = rel + suffix;
  const int fd = ::openat(base, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return file_error(claim, file + suffix, errno);
  int err = 0;
  for (std::size_t done = 0; !err && done < data.size();) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n > 0) done += static_cast<std::size_t>(n);
    else if (n < 0 && errno != EINTR) err = errno;
    else if (n == 0) err = ENOSPC;
  }
  if (::close(fd) != 0 && !err) err = errno;
  if (!err && ::renameat(base, tmp.c_str(), base, rel.c_str()) != 0) err = errno;
  if (!err) return {};
  ::unlinkat(base, tmp.c_str(), 0);
  return "cannot write " + config::quoted(claim.name + "/" + file) + " (" + std::strerror(err) + ")";
}

int open_append(const Claim& claim, const std::string& file, mode_t mode) {
  std::string rel;
  const int base = base_of(claim, file, &rel);
  // O_NONBLOCK: a FIFO in its place must not block the open (it is refused below).
  constexpr int kAppend = O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;
  int fd = -1;
  for (int i = 0; i < 2 && fd < 0; ++i) {
    fd = ::openat(base, rel.c_str(), kAppend);
    if (fd >= 0 || errno != ENOENT) break;
    fd = ::openat(base, rel.c_str(), kAppend | O_CREAT | O_EXCL, mode);
    if (fd < 0 && errno != EEXIST) return -1;  // EEXIST: another process made it meanwhile
  }
  if (fd < 0) return -1;
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
    ::close(fd);
    errno = EEXIST;
    return -1;
  }
  return fd;
}

std::string host_name() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) return "?";
  return host;
}

}  // namespace prof::experiment_dir
