// SPDX-License-Identifier: BSD-3-Clause
// Unit tests of the files prof creates in its experiment directory (issue 30, item 9):
// experiment_dir::write_file and open_append never write through a link planted in the claimed
// directory (prof.cfg, prof.filter, prof.throttle.filter, incomplete.rank<r>, prof.run).
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "measurement/experiment_dir.hpp"

namespace ed = prof::experiment_dir;

namespace {

std::string read(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// A fresh private directory with a claimed experiment "exp" in it and a victim file beside it.
struct Scratch {
  std::string root, exp, victim;
  ed::Claim claim;
  Scratch() {
    char tmpl[] = "/tmp/prof-test-expdir-XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    root = tmpl;
    exp = root + "/exp";
    victim = root + "/victim";
    std::ofstream(victim) << "untouched";
    std::string err, notice;
    REQUIRE(ed::claim(exp, false, &claim, &err, &notice));
    REQUIRE(err.empty());
  }
  ~Scratch() {
    if (claim.dir_fd >= 0) ::close(claim.dir_fd);
    if (claim.lock_fd >= 0) ::close(claim.lock_fd);
    std::system(("rm -rf '" + root + "'").c_str());
  }
};

}  // namespace

TEST_CASE("write_file replaces a link planted at its name and never writes through it", "[experiment_dir]") {
  Scratch s;
  REQUIRE(::symlink(s.victim.c_str(), (s.exp + "/prof.cfg").c_str()) == 0);
  CHECK(ed::write_file(s.claim, "prof.cfg", "PROF_X=1\n").empty());
  CHECK(read(s.victim) == "untouched");
  struct stat st;
  REQUIRE(::lstat((s.exp + "/prof.cfg").c_str(), &st) == 0);
  CHECK(S_ISREG(st.st_mode));
  CHECK(read(s.exp + "/prof.cfg") == "PROF_X=1\n");
  // Again over the file it made (a checkpoint's prof.throttle.filter, then the end's).
  CHECK(ed::write_file(s.claim, "prof.cfg", "PROF_X=2\n").empty());
  CHECK(read(s.exp + "/prof.cfg") == "PROF_X=2\n");
}

TEST_CASE("write_file refuses a link at its temporary name, with one line naming it", "[experiment_dir]") {
  Scratch s;
  const std::string tmp = "prof.throttle.filter.tmp." + std::to_string(::getpid());
  REQUIRE(::symlink(s.victim.c_str(), (s.exp + "/" + tmp).c_str()) == 0);
  const std::string err = ed::write_file(s.claim, "prof.throttle.filter", "x");
  CHECK(err == "cannot create '" + s.exp + "/" + tmp +
                   "': another file is in its place, and prof neither follows links nor writes into files it did not make: "
                   "remove it (and check who else writes into the directory)");
  CHECK(read(s.victim) == "untouched");
  CHECK(::access((s.exp + "/prof.throttle.filter").c_str(), F_OK) != 0);
}

TEST_CASE("open_append creates or appends to a file of its own only", "[experiment_dir]") {
  Scratch s;
  int fd = ed::open_append(s.claim, "prof.run", 0644);
  REQUIRE(fd >= 0);
  CHECK(::write(fd, "a\n", 2) == 2);
  ::close(fd);
  fd = ed::open_append(s.claim, "prof.run", 0644);
  REQUIRE(fd >= 0);
  CHECK(::write(fd, "b\n", 2) == 2);
  ::close(fd);
  CHECK(read(s.exp + "/prof.run") == "a\nb\n");

  REQUIRE(::symlink(s.victim.c_str(), (s.exp + "/linked").c_str()) == 0);
  errno = 0;
  CHECK(ed::open_append(s.claim, "linked", 0644) == -1);
  CHECK(errno == ELOOP);
  CHECK(ed::file_error(s.claim, "linked", ELOOP).rfind("cannot create '" + s.exp + "/linked': a symbolic link is in its place", 0) == 0);

  REQUIRE(::link(s.victim.c_str(), (s.exp + "/hard").c_str()) == 0);  // a hard link: another file's
  errno = 0;
  CHECK(ed::open_append(s.claim, "hard", 0644) == -1);
  CHECK(errno == EEXIST);

  REQUIRE(::mkfifo((s.exp + "/fifo").c_str(), 0600) == 0);  // refused, without blocking
  CHECK(ed::open_append(s.claim, "fifo", 0644) == -1);
  CHECK(read(s.victim) == "untouched");
}
