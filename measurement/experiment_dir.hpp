// SPDX-License-Identifier: BSD-3-Clause
// The experiment directory: checked at init, claimed once per run, written through the
// descriptor the claim opened.
//
// The claim protocol (every prof run follows it, so two runs never share a directory):
//  - A run owns a directory while it holds a POSIX write lock (fcntl F_SETLK) on the file
//    `prof.lock` in it. The lock is taken before the name `prof.lock` exists (on a temporary file
//    that is then hard-linked to it, which fails if the name exists), so nobody ever sees an
//    unlocked `prof.lock` of a live run. The kernel drops the lock when the process ends, however
//    it ends; a forked child does not inherit it.
//  - The directory is created with mkdir (atomic; mode 0755 less the umask). If the name exists:
//    an empty directory is adopted (by linking `prof.lock` into it); a prof experiment (one with
//    `prof.lock`: `prof.cfg` alone proves nothing, any program may have one) whose lock nobody
//    holds is moved aside to `<name>-old-<date>_<time>_<pid>` by the run that took its lock, and
//    only after checking that the name still leads to the lock it holds; a live one (lock held) is
//    never touched: the run takes the first free `<name>-<n>`, n = 2, 3, ...
//    Nor is a finished experiment claimed while this run went on (its owner line's time is after
//    this run's check(), or its pid is this process's: the image before an exec): that of a
//    program this one started (posix_spawn, vfork, fork+exec) with the same name, or this
//    process's own before it called exec (the default name holds the pid, which exec keeps).
//    Moving it aside would hide the data under a name its run never reported; this run takes
//    `<name>-<n>` as for a live one, whatever PROF_OVERWRITE_EXPERIMENT_DIRECTORY says.
//    Files, symbolic links, and directories that are not prof experiments, are never renamed or
//    followed: an error.
//  - Safety (issue 30): OTF2 and the CUBE4 writer open their files by path, so a directory is
//    written into only when nobody else can plant a link in it: it must belong to this process's
//    user (euid; root too) and be writable by nobody else (no group or other write bit; the sticky
//    bit does not help: it stops others from removing names, not from creating them). Checked on
//    the descriptor after every open (O_NOFOLLOW|O_DIRECTORY), so a name replaced between the
//    check and the open is caught. Another user's directory is never used nor renamed.
//  - The run writes through the descriptor it opened (/proc/self/fd/<fd>/...), so a rename of
//    the directory during the run (by a person) cannot send its files elsewhere.
#pragma once

#include <sys/types.h>

#include <string>

namespace prof::experiment_dir {

/// The directory a run writes to. Rank 0 (or a process without MPI) holds the lock; other ranks
/// only open the directory rank 0 claimed.
struct Claim {
  std::string name;   ///< as used in messages: the configured name, or the one chosen instead
  int dir_fd = -1;    ///< the directory, open for the run (O_CLOEXEC)
  int lock_fd = -1;   ///< prof.lock, locked for the run; -1 on other ranks
  dev_t dev = 0;
  ino_t ino = 0;
};

/// Checks made at init, before the program's work (the run's start for claim()'s overlap rule), of the directory `name` (empty: a new default
/// name in the working directory): its parent is a writable directory, not on a file system of
/// the kernel's (/proc, /sys); an existing `name` is a directory of this user's (see Safety) that
/// prof may use or rename aside (`overwrite`: PROF_OVERWRITE_EXPERIMENT_DIRECTORY). Warns (one
/// line, not an error) when the file system has less than 256 KiB (or no inode) free.
/// Returns "" or the one-line message (without "prof: error: ").
std::string check(const std::string& name, bool overwrite);

/// Claims the experiment directory `name` (empty: `prof-<date>_<time>_<pid>`), as the protocol
/// above says. On success fills `out`, and sets `notice` (else leaves it empty) to a warning line
/// when another name had to be taken. On failure returns false with `error` set (one line).
bool claim(const std::string& name, bool overwrite, Claim* out, std::string* error, std::string* notice);

/// Opens the directory another process (rank 0) claimed, to write through it. False when it
/// cannot (`error` set); `out->name` is set in any case.
bool open_claimed(const std::string& name, Claim* out, std::string* error);

/// The path to give writers that take a path (OTF2, the CUBE4 writer): /proc/self/fd/<fd> while
/// that still leads to the claimed directory, else its name.
std::string io_path(const Claim& claim);

/// Writes `file` (a name in the claimed directory) afresh with `data`, never through a link: to a
/// new temporary name (O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC) that then replaces `file` by a rename
/// (a link or file of that name is replaced, not followed or written into). Relative to the
/// claim's descriptor (by the directory's name where it has none). "" or the one-line error.
std::string write_file(const Claim& claim, const std::string& file, const std::string& data);

/// Opens `file` in the claimed directory to append to it (O_WRONLY|O_APPEND|O_CLOEXEC), creating
/// it when missing (O_EXCL): never through a symbolic link, and only a regular file with one name
/// (not a hard link to another file). The descriptor, or -1 with errno (EEXIST: something else
/// is in its place).
int open_append(const Claim& claim, const std::string& file, mode_t mode);

/// The one-line error for `file` (a name in the claimed directory, or a path: `in_claim` false)
/// that could not be created or opened: errno `err`; for a link or other file in its place, what
/// to do about it.
std::string file_error(const Claim& claim, const std::string& file, int err, bool in_claim = true);

/// This machine's host name ("?" when it cannot be read).
std::string host_name();

/// `text` with every io_path() of `claim` replaced by its name, for messages of writers.
std::string readable(const Claim& claim, std::string text);

/// The name used for a new experiment directory when none is configured.
std::string default_name();

}  // namespace prof::experiment_dir
