// SPDX-License-Identifier: BSD-3-Clause
// prof-score on a profile with known values (written with cube4::write): every field of the
// group and region rows, the estimates, -f, -g and the error paths, checked against figures
// worked out by hand below.
#include <sys/stat.h>

#include <fstream>
#include <sstream>
#include <string>

#include "measurement/filter/filter.hpp"
#include "measurement/profiling/cube4_writer.hpp"
#include "test_support.hpp"

namespace cube4 = prof::cube4;

namespace {

struct Dir : prof_test::TempDir {
  Dir() : prof_test::TempDir("prof_test_score_") {}
  std::string file(const std::string& name) const { return path + "/" + name; }
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

prof_test::RunResult score(const Dir& d, const std::string& args) {
  return prof_test::run(std::string(PROF_SCORE) + " " + args, d.path);
}

// Regions (id: name, paradigm):
//   0 prog (measurement)  1 main  2 compute  3 pthread_create (pthread, thread create)
//   4 tiny  5 ns::step() / _ZN2ns4stepEv  6 op[] (a name with wildcard characters)
// Call paths: 0 prog; 1 prog/main; 2 main/compute; 3 compute/tiny; 4 main/pthread_create;
//   5 prog/ns::step (thread 1 only); 6 compute/op[]
// Two locations: "Master thread" (0) and "Pthread thread 1" (1).
cube4::Profile known_profile() {
  cube4::Profile p;
  auto region = [&](const char* name, const char* mangled, const char* paradigm, const char* role) {
    p.regions.push_back({name, mangled, "/src/app.c", 10, 20, paradigm, role});
  };
  region("prog", "prog", "measurement", "artificial");
  region("main", "main", "compiler", "function");
  region("compute", "compute", "compiler", "function");
  region("pthread_create", "pthread_create", "pthread", "thread create");
  region("tiny", "tiny", "compiler", "function");
  region("ns::step()", "_ZN2ns4stepEv", "compiler", "function");
  region("op[]", "op[]", "compiler", "function");
  p.cnodes = {{0, -1}, {1, 0}, {2, 1}, {4, 2}, {3, 1}, {5, 0}, {6, 2}};
  p.locations = {"Master thread", "Pthread thread 1"};
  // visits, inclusive time (s), per cnode: {location 0, location 1}
  p.visits = {1, 0, 1, 0, 10, 0, 1000000, 0, 1, 0, 0, 200, 5, 0};
  p.time_incl = {10.0, 4.0, 9.0, 0.0, 6.0, 0.0, 1.0, 0.0, 0.5, 0.0, 0.0, 4.0, 2.0, 0.0};
  p.min_time.assign(p.visits.size(), 0.0);
  p.max_time.assign(p.visits.size(), 0.0);
  for (std::size_t i = 0; i < p.visits.size(); ++i)
    if (p.visits[i]) p.min_time[i] = p.max_time[i] = p.time_incl[i] / static_cast<double>(p.visits[i]);
  return p;
}

Dir& written(Dir& d) {
  std::string err;
  REQUIRE(cube4::write(d.file("profile.cubex"), known_profile(), &err));
  return d;
}

}  // namespace

// Worked out by hand:
//   bytes per visit = 2 × (9 + 1 + compressed(region id)), compressed(id) = 1 + significant bytes:
//     main(1), compute(2), tiny(4), ns::step(5), op[](6): 2 × 12 = 24; pthread_create(3): 24 plus
//     3 thread events (ThreadCreate; ThreadBegin and ThreadEnd of the new thread) × 15 = 69;
//     prog (measurement): 0.
//   exclusive time: prog 10 - 9 = 1 (loc 0) and 4 - 4 = 0 (loc 1); main 9 - 6 - 0.5 = 2.5;
//     compute 6 - 1 - 2 = 3; tiny 1; pthread_create 0.5; ns::step 4; op[] 2. Total = 10 + 4 = 14.
//   groups: main leads to pthread_create → COM; compute, tiny, ns::step, op[] → USR.
//   USR: visits 10 + 1,000,000 + 200 + 5 = 1,000,215; bytes 24 × that = 24,005,160; time 3+1+4+2 = 10.
//   ALL: visits 1 + 1 + 1,000,215 + 1 = 1,000,218; bytes 24 + 40 + 24,005,160 = 24,005,253.
TEST_CASE("prof-score: group and region rows, field by field", "[prof_score]") {
  Dir d;
  written(d);
  const auto r = score(d, "-r " + d.path);
  INFO(r.out << r.err);
  REQUIRE(r.rc == 0);
  const std::string& o = r.out;
  CHECK(o.find("Profile: " + d.path + "/profile.cubex (7 call paths, 2 locations in 1 process)\n") != std::string::npos);
  CHECK(o.find("Estimated aggregate size of event trace:                   24.01 MB\n") != std::string::npos);
  CHECK(o.find("Estimated requirements for largest trace buffer (max_buf): 24.01 MB\n") != std::string::npos);
  // Raw: 32 B per visit of every region but prog and pthread_create (32 + 3 × 32 = 128):
  // 32 × 1,000,216 + 128 = 32,007,040; plus 3 × 2 × 64 KiB partly used chunks and 64 B for each
  // of the 8 (cnode, location) pairs with data: 32,400,768 bytes.
  // 41M leaves 41M - 2 × 4M (OTF2) - 41M/20 = 32,453,428 bytes of event pool; 40M would leave 31,457,280.
  CHECK(o.find("Estimated memory requirements (PROF_TOTAL_MEMORY):         41M\n") != std::string::npos);
  CHECK(o.find("        ALL       24,005,253      1,000,218   14.000000   100.0          14.00  ALL\n") != std::string::npos);
  CHECK(o.find("        USR       24,005,160      1,000,215   10.000000    71.4          10.00  USR\n") != std::string::npos);
  CHECK(o.find("        COM               24              1    2.500000    17.9     2500000.00  COM\n") != std::string::npos);
  CHECK(o.find("       PROF                0              1    1.000000     7.1     1000000.00  PROF\n") != std::string::npos);
  CHECK(o.find("    PTHREAD               69              1    0.500000     3.6      500000.00  PTHREAD\n") != std::string::npos);
  CHECK(o.find("        USR       24,000,000      1,000,000    1.000000     7.1           1.00  tiny\n") != std::string::npos);
  CHECK(o.find("        USR            4,800            200    4.000000    28.6       20000.00  ns::step()\n") != std::string::npos);
  CHECK(o.find("        USR              240             10    3.000000    21.4      300000.00  compute\n") != std::string::npos);
  CHECK(o.find("        USR              120              5    2.000000    14.3      400000.00  op[]\n") != std::string::npos);
  // Default order: max_buf, largest first.
  CHECK(o.find("  tiny\n") < o.find("  ns::step()\n"));
  CHECK(o.find("  ns::step()\n") < o.find("  compute\n"));

  const auto tv = score(d, "-r -s timepervisit " + d.path);
  CHECK(tv.out.find("  tiny\n") < tv.out.find("  ns::step()\n"));  // shortest first
  const auto m = score(d, "-r -m -s name " + d.path);
  CHECK(m.out.find("  _ZN2ns4stepEv\n") != std::string::npos);
  CHECK(m.out.find("  compute\n") < m.out.find("  main\n"));

  const auto j = score(d, "--json " + d.path);
  INFO(j.out);
  REQUIRE(j.rc == 0);
  CHECK(j.out.find("\"estimate\": {\"trace_bytes\": 24005253, \"max_buf\": 24005253, \"max_raw_bytes\": 32007040, "
                   "\"total_memory\": 42991616, \"total_memory_text\": \"41M\"}") != std::string::npos);
  CHECK(j.out.find("{\"type\": \"USR\", \"name\": \"tiny\", \"max_buf\": 24000000, \"trace_bytes\": 24000000, \"visits\": 1000000, "
                   "\"time\": 1, \"time_percent\": 7.14285714, \"time_per_visit_us\": 1, \"mangled\": \"tiny\", "
                   "\"file\": \"/src/app.c\", \"paradigm\": \"compiler\", \"filterable\": true}") != std::string::npos);
  CHECK(j.out.find("\"name\": \"pthread_create\"") != std::string::npos);

  // -c 2: two metric values with every Enter and Leave, 2 × (14 + 2 × 9) = 64 more OTF2 bytes per visit.
  const auto c = score(d, "-r -c 2 " + d.path);
  CHECK(c.out.find("        USR       88,000,000      1,000,000    1.000000     7.1           1.00  tiny\n") != std::string::npos);
  CHECK(j.out.find("\"filterable\": false") != std::string::npos);
}

TEST_CASE("prof-score -f: filtered rows, FLT groups and the estimate after filtering", "[prof_score]") {
  Dir d;
  written(d);
  {
    std::ofstream f(d.file("f.filter"));
    f << "SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE tiny pthread_*\nSCOREP_REGION_NAMES_END\n";
  }
  const auto r = score(d, "-r -f " + d.file("f.filter") + " " + d.path);
  INFO(r.out << r.err);
  REQUIRE(r.rc == 0);
  const std::string& o = r.out;
  // pthread_create is not compiler-instrumented: the run-time filter does not apply to it.
  // As scorep-score: the groups as they are, then ALL-FLT and <GROUP>-FLT (what remains after
  // filtering; '*' where the filter takes part of the group) and FLT (what it removes).
  CHECK(o.find("  -     ALL       24,005,253      1,000,218   14.000000   100.0          14.00  ALL\n") != std::string::npos);
  CHECK(o.find("  -     USR       24,005,160      1,000,215   10.000000    71.4          10.00  USR\n") != std::string::npos);
  CHECK(o.find("  *     ALL            5,253            218   13.000000    92.9       59633.03  ALL-FLT\n") != std::string::npos);
  CHECK(o.find("  +     FLT       24,000,000      1,000,000    1.000000     7.1           1.00  FLT\n") != std::string::npos);
  CHECK(o.find("  *     USR            5,160            215    9.000000    64.3       41860.47  USR-FLT\n") != std::string::npos);
  CHECK(o.find("  -     COM               24              1    2.500000    17.9     2500000.00  COM-FLT\n") != std::string::npos);
  CHECK(o.find("  - PTHREAD               69              1    0.500000     3.6      500000.00  PTHREAD-FLT\n") != std::string::npos);
  CHECK(o.find("USR-FLT") > o.find("  FLT\n"));
  CHECK(o.find("  +     USR       24,000,000      1,000,000    1.000000     7.1           1.00  tiny\n") != std::string::npos);
  CHECK(o.find("  -     USR            4,800            200    4.000000    28.6       20000.00  ns::step()\n") != std::string::npos);
  CHECK(o.find("  - PTHREAD               69              1    0.500000     3.6      500000.00  pthread_create\n") != std::string::npos);
  // 24,005,253 - 24,000,000 = 5,224 bytes; memory: 32 × 218 + 32 + 393,216 + 512 → 8M.
  CHECK(o.find("Estimated aggregate size of event trace after filtering:                   5.25 kB\n") != std::string::npos);
  CHECK(o.find("Estimated memory requirements (PROF_TOTAL_MEMORY) after filtering:         8M\n") != std::string::npos);
}

TEST_CASE("prof-score -g: a valid filter that excludes the short, frequent user functions", "[prof_score]") {
  Dir d;
  written(d);
  const std::string out = d.file("initial.filter");
  // Defaults: > 1 % of max_buf and < 1 us per visit: only tiny (99.98 %, 1 us is not < 1 us → none!).
  auto r = score(d, "-g -o " + out + " " + d.path);
  INFO(r.out << r.err);
  REQUIRE(r.rc == 0);
  CHECK(r.err.find("prof-score: wrote " + out + ": 0 regions excluded") != std::string::npos);

  // timepervisit=2: tiny; bufferpercent=0.001 brings in the others above 240 B of 24 MB, but they are slow.
  r = score(d, "-g bufferpercent=0.0001,timepervisit=2 -o " + out + " " + d.path);
  REQUIRE(r.rc == 0);
  CHECK(r.err.find("existed and was renamed to " + out + ".old") != std::string::npos);
  std::string text = slurp(out);
  INFO(text);
  CHECK(text.find("  EXCLUDE MANGLED tiny  # tiny, 24,000,000 bytes, 1,000,000 visits, 1.000 us/visit\n") != std::string::npos);
  CHECK(text.find("EXCLUDE MANGLED compute") == std::string::npos);

  // Everything user-level: names are written as exact patterns (wildcards quoted), mangled where they differ.
  r = score(d, "-g bufferpercent=0,timepervisit=1e12,type=both -o " + out + " " + d.path);
  REQUIRE(r.rc == 0);
  text = slurp(out);
  CHECK(text.find("EXCLUDE MANGLED op\\[\\]  # op[]") != std::string::npos);
  CHECK(text.find("EXCLUDE MANGLED _ZN2ns4stepEv  # ns::step()") != std::string::npos);
  CHECK(text.find("EXCLUDE MANGLED main  # main") != std::string::npos);  // COM, with type=both
  CHECK(text.find("pthread_create") == std::string::npos);              // not filterable
  prof::filter::Filter f;
  std::string err;
  REQUIRE(f.load(out, &err));
  CHECK(f.excluded("op[]", "", "/src/app.c"));
  CHECK_FALSE(f.excluded("opx", "", "/src/app.c"));
  CHECK(f.excluded("ns::step()", "_ZN2ns4stepEv", "/src/app.c"));
  CHECK(f.excluded("tiny", "", "/src/app.c"));
  CHECK_FALSE(f.excluded("other", "", "/src/app.c"));

  // -g all: every filterable region with visits, into max_prof.filter by default.
  r = score(d, "-g all -o " + d.file("max.filter") + " " + d.path);
  REQUIRE(r.rc == 0);
  CHECK(r.err.find(": 5 regions excluded") != std::string::npos);  // main compute tiny ns::step op[]; not pthread_create, prog
  {
    prof::filter::Filter all;
    REQUIRE(all.load(d.file("max.filter"), &err));
    CHECK(all.excluded("main", "", ""));
    CHECK(all.excluded("compute", "", ""));
  }

  // With -f: the regions the filter removes are not chosen again, its rules are kept, and the
  // shares are of what remains (tiny filtered: compute's 240 of 5,224 bytes is 4.6 %).
  {
    std::ofstream f(d.file("tiny.filter"));
    f << "PROF_REGION_NAMES_BEGIN\n  EXCLUDE tiny\nPROF_REGION_NAMES_END\n";
  }
  r = score(d, "-f " + d.file("tiny.filter") + " -g bufferpercent=4,timepervisit=1e12 -o " + out + " " + d.path);
  REQUIRE(r.rc == 0);
  text = slurp(out);
  CHECK(text.find("EXCLUDE MANGLED tiny  #") == std::string::npos);
  CHECK(text.find("# --- the rules of " + d.file("tiny.filter") + " (-f), kept:\nPROF_REGION_NAMES_BEGIN\n  EXCLUDE tiny\n") != std::string::npos);
  CHECK(text.find("EXCLUDE MANGLED compute  #") != std::string::npos);   // 240 B: 4.6 % of what remains
  CHECK(text.find("EXCLUDE MANGLED _ZN2ns4stepEv  #") != std::string::npos);  // 4,800 B
  CHECK(text.find("EXCLUDE MANGLED op\\[\\]") == std::string::npos);      // 120 B: 2.3 %
  REQUIRE(f.load(out, &err));
  CHECK(f.excluded("tiny", "", ""));
  // Earlier files are never overwritten: .old, then .old.1, ...
  struct stat st;
  CHECK(::stat((out + ".old").c_str(), &st) == 0);
  CHECK(::stat((out + ".old.1").c_str(), &st) == 0);
  CHECK(::stat((out + ".old.2").c_str(), &st) == 0);

  // type=com: only main.
  r = score(d, "-g bufferpercent=0,timepervisit=1e12,type=com -o " + out + " " + d.path);
  REQUIRE(r.rc == 0);
  CHECK(r.err.find(": 1 region excluded") != std::string::npos);
}

TEST_CASE("prof-score: errors name the cause and the fix", "[prof_score]") {
  Dir d;
  auto r = score(d, d.path);
  CHECK(r.rc == 1);
  CHECK(r.err == "prof-score: error: " + d.path +
                     " has no profile.cubex; run the program with PROF_ENABLE_PROFILING=true (the default), or name the .cubex file\n");
  {
    std::string err;
    REQUIRE(cube4::write(d.file("other.cubex"), known_profile(), &err));  // PROF_PROFILING_BASE_NAME=other
    r = score(d, d.path);
    CHECK(r.rc == 0);
    CHECK(r.out.find("Profile: " + d.file("other.cubex")) != std::string::npos);
    REQUIRE(cube4::write(d.file("third.cubex"), known_profile(), &err));
    r = score(d, d.path);
    CHECK(r.rc == 1);
    CHECK(r.err.find("has 2 .cubex files but no profile.cubex; name the one to read") != std::string::npos);
    std::remove(d.file("other.cubex").c_str());
    std::remove(d.file("third.cubex").c_str());
  }
  r = score(d, d.file("nothing.cubex"));
  CHECK(r.rc == 1);
  CHECK(r.err.find("nothing.cubex: No such file or directory; expected an experiment directory or a .cubex file") != std::string::npos);
  {
    std::ofstream f(d.file("junk.cubex"));
    f << "not a tar archive\n";
  }
  r = score(d, d.file("junk.cubex"));
  CHECK(r.rc == 1);
  CHECK(r.err.rfind("prof-score: error: " + d.file("junk.cubex"), 0) == 0);
  written(d);
  {
    std::ofstream f(d.file("bad.filter"));
    f << "PROF_REGION_NAMES_BEGIN\n  EXCLUDEX tiny\nPROF_REGION_NAMES_END\n";
  }
  r = score(d, "-f " + d.file("bad.filter") + " " + d.path);
  CHECK(r.rc == 1);
  CHECK(r.err.find("bad.filter:2: 'EXCLUDEX' is not a rule keyword") != std::string::npos);
  r = score(d, "-g timepervisit=x " + d.path);
  CHECK(r.rc == 2);
  CHECK(r.err.find("prof-score: error: -g: timepervisit=x is not a number >= 0") != std::string::npos);
  r = score(d, "-g colour=red " + d.path);
  CHECK(r.rc == 2);
  CHECK(r.err.find("unknown key 'colour'") != std::string::npos);
  r = score(d, "-s fastest " + d.path);
  CHECK(r.rc == 2);
  r = score(d, "-m " + d.path);
  CHECK(r.rc == 2);
  CHECK(r.err.find("-m needs -r") != std::string::npos);
  r = score(d, "");
  CHECK(r.rc == 2);
  r = score(d, "-g -o /nonexistent-dir/x.filter " + d.path);
  CHECK(r.rc == 1);
  CHECK(r.err.find("cannot write /nonexistent-dir/x.filter") != std::string::npos);
}
