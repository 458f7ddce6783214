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

// A CUDA program's profile: per process ("Process", or "MPI Rank <r>" with several) two threads
// and two GPU streams in the accelerator group "CUDA Context 1" created by that process.
// Regions (id: name, paradigm, role):
//   0 prog (measurement)  1 main  2 step  3 helper (compiler)  4 cudaLaunchKernel  5 cudaMemcpy
//   6 cudaMemsetAsync (cuda, wrapper)  7 add(float*, int, float)  8 scale(float*) (cuda, function:
//   kernels)  9 cudaMemcpy HtoD  10 cudaMemset (cuda, data transfer)
// Call paths: 0 prog; 1 main; 2 main/step; 3 step/cudaLaunchKernel; 4 …/add; 5 …/scale;
//   6 main/cudaMemcpy; 7 cudaMemcpy/cudaMemcpy HtoD; 8 main/cudaMemsetAsync; 9 …/cudaMemset;
//   10 main/helper; 11 prog/step (thread 1); 12 step/cudaLaunchKernel; 13 …/add
// Columns per process: Master thread, Pthread thread 1, CUDA[0:7], CUDA[0:13].
cube4::Profile gpu_profile(int ranks = 1) {
  cube4::Profile p;
  auto region = [&](const char* name, const char* mangled, const char* paradigm, const char* role) {
    p.regions.push_back({name, mangled, std::string(paradigm) == "compiler" ? "/src/app.cu" : "", -1, -1, paradigm, role});
  };
  region("prog", "prog", "measurement", "artificial");
  region("main", "main", "compiler", "function");
  region("step", "_Z4stepv", "compiler", "function");
  region("helper", "_Z6helperv", "compiler", "function");
  region("cudaLaunchKernel", "cudaLaunchKernel", "cuda", "wrapper");
  region("cudaMemcpy", "cudaMemcpy", "cuda", "wrapper");
  region("cudaMemsetAsync", "cudaMemsetAsync", "cuda", "wrapper");
  region("add(float*, int, float)", "_Z3addPfif", "cuda", "function");
  region("scale(float*)", "_Z5scalePf", "cuda", "function");
  region("cudaMemcpy HtoD", "cudaMemcpy HtoD", "cuda", "data transfer");
  region("cudaMemset", "cudaMemset", "cuda", "data transfer");
  p.cnodes = {{0, -1}, {1, 0}, {2, 1}, {4, 2}, {7, 3}, {8, 3}, {5, 1}, {9, 6}, {6, 1}, {10, 8}, {3, 1}, {2, 0}, {4, 11}, {7, 12}};
  for (int r = 0; r < ranks; ++r) {
    cube4::Profile::Group process, accel;
    process.name = ranks > 1 ? "MPI Rank " + std::to_string(r) : std::string("Process");
    process.rank = accel.rank = r;
    accel.name = "CUDA Context 1";
    accel.type = "accelerator";
    accel.creator = static_cast<std::int64_t>(p.groups.size());
    p.groups.push_back(process);
    p.groups.push_back(accel);
    for (const char* name : {"Master thread", "Pthread thread 1", "CUDA[0:7]", "CUDA[0:13]"}) {
      const bool stream = name[0] == 'C';
      p.locations.push_back(name);
      p.location_group.push_back(static_cast<std::uint32_t>(p.groups.size() - (stream ? 1 : 2)));
      p.location_types.push_back(stream ? "accelerator stream" : "thread");
    }
  }
  const std::size_t nl = p.locations.size(), n = p.cnodes.size();
  std::vector<double> self(n * nl, 0.0);
  p.visits.assign(n * nl, 0);
  p.min_time.assign(n * nl, 0.0);
  p.max_time.assign(n * nl, 0.0);
  cube4::ExtraMetric bytes{"bytes_copied", "Bytes copied", "bytes", "", "", std::vector<std::uint64_t>(n * nl, 0)};
  for (int r = 0; r < ranks; ++r) {
    const std::size_t t0 = 4 * r, t1 = t0 + 1, s0 = t0 + 2, s1 = t0 + 3;
    // Host: visits and exclusive time.
    auto host = [&](std::size_t c, std::size_t l, std::uint64_t v, double t) {
      p.visits[c * nl + l] = v;
      self[c * nl + l] = t;
    };
    host(0, t0, 1, 1.0);
    host(1, t0, 1, 1.499);
    host(2, t0, 10, 5.997);
    host(3, t0, 300, 0.003);
    host(6, t0, 3, 1.0);
    host(8, t0, 1, 0.001);
    host(10, t0, 1000, 0.5);
    host(11, t1, 5, 1.9995);
    host(12, t1, 50, 0.0005);
    // GPU: executions, GPU time, shortest and longest, bytes.
    auto gpu = [&](std::size_t c, std::size_t l, std::uint64_t v, double t, double mn, double mx, std::uint64_t b) {
      p.visits[c * nl + l] = v;
      self[c * nl + l] = t;
      p.min_time[c * nl + l] = mn;
      p.max_time[c * nl + l] = mx;
      bytes.values[c * nl + l] = b;
    };
    gpu(4, s0, 150, 0.3, 0.001, 0.004, 0);
    gpu(5, s0, 100, 0.1, 0.0005, 0.002, 0);
    gpu(7, s0, 2, 0.002, 0.0008, 0.0012, 8000000);
    gpu(9, s0, 1, 0.0001, 0.0001, 0.0001, 1000000);
    gpu(4, s1, 50, 0.2, 0.002, 0.008, 0);
    gpu(13, s1, 50, 0.05, 0.0005, 0.0015, 0);
  }
  // Inclusive time: on the stream columns the launching paths get the time of what ran below.
  p.time_incl = self;
  for (std::size_t c = n; c-- > 1;)
    for (std::size_t l = 0; l < nl; ++l) p.time_incl[static_cast<std::size_t>(p.cnodes[c].parent) * nl + l] += p.time_incl[c * nl + l];
  for (std::size_t i = 0; i < n * nl; ++i)
    if (p.visits[i] && p.max_time[i] == 0) p.min_time[i] = p.max_time[i] = p.time_incl[i] / static_cast<double>(p.visits[i]);
  p.extra_metrics.push_back(std::move(bytes));
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

  // -c 2: two metric values with every Enter and Leave, 2 × (4 + 2 × 6) = 32 more OTF2 bytes per visit.
  const auto c = score(d, "-r -c 2 " + d.path);
  CHECK(c.out.find("        USR       56,000,000      1,000,000    1.000000     7.1           1.00  tiny\n") != std::string::npos);
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

// Worked out by hand (one process):
//   bytes per visit: 2 × (9 + 1 + 2) = 24 for every traced region on a thread and for kernels and
//     memsets on a stream (Enter, Leave; no metrics on streams); a host-to-device copy also writes
//     RmaGet (10 + compressed(4,000,000 bytes per copy) = 4) and RmaOpCompleteBlocking (8): 46.
//   host: main 1, step 10 + 5, helper 1000, cudaLaunchKernel 300 + 50, cudaMemcpy 3,
//     cudaMemsetAsync 1 visits; GPU: add 150 + 50 + 50, scale 100, HtoD 2, cudaMemset 1.
//   USR helper: 24,000 B, 0.5 s. COM main + step: 16 visits, 384 B, 1.499 + 5.997 + 1.9995 = 9.4955 s.
//   CUDA (host calls): 354 visits, 8,496 B, 0.003 + 0.0005 + 1 + 0.001 = 1.0045 s.
//   GPU: 353 executions, 250 × 24 + 100 × 24 + 2 × 46 + 24 = 8,516 B, 0.55 + 0.1 + 0.002 + 0.0001 = 0.6521 s.
//   ALL: 1,724 visits, 24,000 + 384 + 8,496 + 8,516 = 41,396 B, 12.6521 s; max_buf is all of it (the
//     streams' events go to the process's buffers). Raw: 32 B per Enter/Leave pair, a copy 32 + 48 + 32:
//     32 × (1,370 host + 351 kernel and memset) + 2 × 112 = 55,296.
TEST_CASE("prof-score: GPU streams: processes, the GPU group and the GPU activities", "[prof_score]") {
  Dir d;
  std::string err;
  REQUIRE(cube4::write(d.file("profile.cubex"), gpu_profile(), &err));
  const auto r = score(d, "-r " + d.path);
  INFO(r.out << r.err);
  REQUIRE(r.rc == 0);
  const std::string& o = r.out;
  CHECK(o.find("Profile: " + d.path + "/profile.cubex (14 call paths, 4 locations in 1 process, 2 of them GPU streams)\n") != std::string::npos);
  CHECK(o.find("Estimated aggregate size of event trace:                   41.40 kB\n") != std::string::npos);
  CHECK(o.find("Estimated requirements for largest trace buffer (max_buf): 41.40 kB\n") != std::string::npos);
  CHECK(o.find("        ALL           41,396          1,724   12.652100   100.0        7338.81  ALL\n") != std::string::npos);
  CHECK(o.find("        USR           24,000          1,000    0.500000     4.0         500.00  USR\n") != std::string::npos);
  CHECK(o.find("        COM              384             16    9.495500    75.1      593468.75  COM\n") != std::string::npos);
  CHECK(o.find("       PROF                0              1    1.000000     7.9     1000000.00  PROF\n") != std::string::npos);
  CHECK(o.find("       CUDA            8,496            354    1.004500     7.9        2837.57  CUDA\n") != std::string::npos);
  CHECK(o.find("        GPU            8,516            353    0.652100     5.2        1847.31  GPU\n") != std::string::npos);
  // Groups in order; GPU right after CUDA.
  CHECK(o.find("  CUDA\n") < o.find("  GPU\n"));
  // Region rows: the kernels and copies as GPU, the host calls as CUDA; no CUDA row for a kernel.
  CHECK(o.find("        GPU            6,000            250    0.550000     4.3        2200.00  add(float*, int, float)\n") != std::string::npos);
  CHECK(o.find("        GPU            2,400            100    0.100000     0.8        1000.00  scale(float*)\n") != std::string::npos);
  CHECK(o.find("        GPU               92              2    0.002000     0.0        1000.00  cudaMemcpy HtoD\n") != std::string::npos);
  CHECK(o.find("        GPU               24              1    0.000100     0.0         100.00  cudaMemset\n") != std::string::npos);
  CHECK(o.find("       CUDA            8,400            350    0.003500     0.0          10.00  cudaLaunchKernel\n") != std::string::npos);
  CHECK(o.find("       CUDA               72              3    1.000000     7.9      333333.33  cudaMemcpy\n") != std::string::npos);
  CHECK(o.find("CUDA               0") == std::string::npos);  // no empty host rows of the kernels
  CHECK(o.find("        COM              360             15    7.996500    63.2      533100.00  step\n") != std::string::npos);

  // nvprof's summary: share of the GPU time (0.6521 s), total, calls, avg, min and max over both
  // streams (add: 0.3 + 0.2 + 0.05 s in 250 calls, 0.5 ms to 8 ms), longest first; then the bytes.
  const std::string view =
      "\nGPU activities on 2 GPU streams (GPU time; Min and Max of one execution):\n"
      "            Type  Time(%)     Total     Calls       Avg       Min       Max  Name\n"
      " GPU activities:   84.34%  550.00ms       250  2.2000ms  500.00us  8.0000ms  add(float*, int, float)\n"
      "                   15.34%  100.00ms       100  1.0000ms  500.00us  2.0000ms  scale(float*)\n"
      "                    0.31%  2.0000ms         2  1.0000ms  800.00us  1.2000ms  cudaMemcpy HtoD\n"
      "                    0.02%  100.00us         1  100.00us  100.00us  100.00us  cudaMemset\n"
      "\n"
      "            Type      Size     Calls      Time  Throughput  Name\n"
      "  GPU transfers:  8.0000MB         2  2.0000ms  4.0000GB/s  cudaMemcpy HtoD\n"
      "                  1.0000MB         1  100.00us  10.000GB/s  cudaMemset\n";
  CHECK(o.find(view) != std::string::npos);
  CHECK(o.size() >= view.size());
  CHECK(o.compare(o.size() - view.size(), view.size(), view) == 0);  // after the main table and the regions

  const auto j = score(d, "--json " + d.path);
  INFO(j.out);
  REQUIRE(j.rc == 0);
  CHECK(j.out.find("\"locations\": 4,\n  \"processes\": 1,") != std::string::npos);
  CHECK(j.out.find("\"estimate\": {\"trace_bytes\": 41396, \"max_buf\": 41396, \"max_raw_bytes\": 55296, ") != std::string::npos);
  CHECK(j.out.find("{\"type\": \"GPU\", \"name\": \"GPU\", \"max_buf\": 8516, \"trace_bytes\": 8516, \"visits\": 353, \"time\": 0.6521, ") !=
        std::string::npos);
  CHECK(j.out.find("{\"type\": \"CUDA\", \"name\": \"CUDA\", \"max_buf\": 8496, \"trace_bytes\": 8496, \"visits\": 354, \"time\": 1.0045, ") !=
        std::string::npos);
  CHECK(j.out.find("{\"type\": \"GPU\", \"name\": \"add(float*, int, float)\", \"max_buf\": 6000, ") != std::string::npos);
  CHECK(j.out.find("\"gpu_streams\": 2,\n  \"gpu_time\": 0.6521,\n  \"gpu_activities\": [\n"
                   "    {\"name\": \"add(float*, int, float)\", \"kind\": \"kernel\", \"time_percent\": 84.3428922, \"time\": 0.55, "
                   "\"calls\": 250, \"avg\": 0.0022, \"min\": 0.0005, \"max\": 0.008},\n"
                   "    {\"name\": \"scale(float*)\", \"kind\": \"kernel\", \"time_percent\": 15.3350713, \"time\": 0.1, "
                   "\"calls\": 100, \"avg\": 0.001, \"min\": 0.0005, \"max\": 0.002},\n"
                   "    {\"name\": \"cudaMemcpy HtoD\", \"kind\": \"copy\", \"time_percent\": 0.306701426, \"time\": 0.002, "
                   "\"calls\": 2, \"avg\": 0.001, \"min\": 0.0008, \"max\": 0.0012, \"bytes\": 8000000},\n"
                   "    {\"name\": \"cudaMemset\", \"kind\": \"memset\", \"time_percent\": 0.0153350713, \"time\": 0.0001, "
                   "\"calls\": 1, \"avg\": 0.0001, \"min\": 0.0001, \"max\": 0.0001, \"bytes\": 1000000}\n"
                   "  ],\n  \"gpu_transfers\": [\n"
                   "    {\"name\": \"cudaMemcpy HtoD\", \"bytes\": 8000000, \"calls\": 2, \"time\": 0.002, \"gb_per_s\": 4},\n"
                   "    {\"name\": \"cudaMemset\", \"bytes\": 1000000, \"calls\": 1, \"time\": 0.0001, \"gb_per_s\": 10}\n"
                   "  ]\n}\n") != std::string::npos);

  // -c 2: metric values come with the host's events, not with the streams' (2 × (4 + 2 × 6) = 32 B more per visit).
  const auto c = score(d, "-r -c 2 " + d.path);
  CHECK(c.out.find("        USR           56,000          1,000    0.500000     4.0         500.00  helper\n") != std::string::npos);
  CHECK(c.out.find("        GPU            6,000            250    0.550000     4.3        2200.00  add(float*, int, float)\n") != std::string::npos);

  // --metric on a profile with GPU streams (min_time and max_time are read after the other metrics):
  // bytes_copied per row, the copy's on its GPU row.
  const auto m = score(d, "-r --metric bytes_copied " + d.path);
  INFO(m.out << m.err);
  REQUIRE(m.rc == 0);
  CHECK(m.out.find("Bytes copied[bytes]  region\n") != std::string::npos);
  CHECK(m.out.find("       8,000,000  cudaMemcpy HtoD\n") != std::string::npos);
  const auto mj = score(d, "--json --metric bytes_copied " + d.path);
  CHECK(mj.out.find("\"metric\": {\"name\": \"Bytes copied\", \"uniq_name\": \"bytes_copied\", \"unit\": \"bytes\"}") !=
        std::string::npos);
  const auto none = score(d, "--metric no_such_metric " + d.path);
  CHECK(none.rc == 1);
  CHECK(none.err.find("has no metric 'no_such_metric'; it has visits, time, min_time, max_time") != std::string::npos);

  // -f: a filter leaves the GPU rows alone (they are not compiler-instrumented).
  {
    std::ofstream f(d.file("f.filter"));
    f << "PROF_REGION_NAMES_BEGIN\n  EXCLUDE helper add*\nPROF_REGION_NAMES_END\n";
  }
  const auto flt = score(d, "-f " + d.file("f.filter") + " " + d.path);
  INFO(flt.out << flt.err);
  CHECK(flt.out.find("  -     GPU            8,516            353    0.652100     5.2        1847.31  GPU-FLT\n") != std::string::npos);
  CHECK(flt.out.find("  +     FLT           24,000          1,000    0.500000     4.0         500.00  FLT\n") != std::string::npos);
}

TEST_CASE("prof-score: GPU streams of two MPI ranks: each rank's streams are in its process", "[prof_score]") {
  Dir d;
  std::string err;
  REQUIRE(cube4::write(d.file("profile.cubex"), gpu_profile(2), &err));
  const auto r = score(d, d.path);
  INFO(r.out << r.err);
  REQUIRE(r.rc == 0);
  CHECK(r.out.find("(14 call paths, 8 locations in 2 processes, 4 of them GPU streams)\n") != std::string::npos);
  // Both ranks the same: twice the events, each rank's buffer as large as the one process's above.
  CHECK(r.out.find("Estimated aggregate size of event trace:                   82.79 kB\n") != std::string::npos);
  CHECK(r.out.find("Estimated requirements for largest trace buffer (max_buf): 41.40 kB\n") != std::string::npos);
  CHECK(r.out.find("        GPU            8,516            706    1.304200     5.2        1847.31  GPU\n") != std::string::npos);
  CHECK(r.out.find(" GPU activities:   84.34%   1.1000s       500  2.2000ms  500.00us  8.0000ms  add(float*, int, float)\n") != std::string::npos);
  CHECK(r.out.find("  GPU transfers:  16.000MB         4  4.0000ms  4.0000GB/s  cudaMemcpy HtoD\n") != std::string::npos);
  const auto j = score(d, "--json " + d.path);
  CHECK(j.out.find("\"locations\": 8,\n  \"processes\": 2,") != std::string::npos);
  CHECK(j.out.find("\"gpu_streams\": 4,") != std::string::npos);
}

TEST_CASE("prof-score: a profile without GPU streams has no GPU group or view", "[prof_score]") {
  Dir d;
  written(d);
  const auto r = score(d, "-r " + d.path);
  REQUIRE(r.rc == 0);
  CHECK(r.out.find("GPU") == std::string::npos);
  CHECK(r.out.find("GPU stream") == std::string::npos);
  const auto j = score(d, "--json " + d.path);
  REQUIRE(j.rc == 0);
  CHECK(j.out.find("gpu") == std::string::npos);
  CHECK(j.out.find("\"processes\": 1,") != std::string::npos);
  CHECK(j.out.compare(j.out.size() - 7, 7, "\n  ]\n}\n") == 0);  // the regions list ends it
  const auto h = score(d, "-h");
  CHECK(h.rc == 0);
  CHECK(h.out.find("\"GPU activities\" table like\nnvprof's") != std::string::npos);
}

// Calls below PROF_PROFILING_MAX_CALLPATH_DEPTH: the profile folds them into the call path at
// the cutoff (folded_visits, not in its visits); a trace has their Enter and Leave. Here
// compute/tiny (depth 3) on the master thread has 500,000 of them: they count as visits of tiny,
// 24 bytes each like tiny's own, and 32 raw bytes each in the memory estimate.
TEST_CASE("prof-score: visits folded below the depth limit count in the estimates", "[prof_score]") {
  Dir d;
  cube4::Profile p = known_profile();
  cube4::ExtraMetric folded{"folded_visits", "Folded visits", "occ", "", "", {}};
  folded.values.assign(p.visits.size(), 0);
  folded.values[3 * 2 + 0] = 500000;
  p.extra_metrics.push_back(folded);
  std::string err;
  REQUIRE(cube4::write(d.file("profile.cubex"), p, &err));
  const auto r = score(d, "-r " + d.path);
  INFO(r.out << r.err);
  REQUIRE(r.rc == 0);
  const std::string& o = r.out;
  // 24,005,253 + 24 × 500,000 bytes.
  CHECK(o.find("Estimated aggregate size of event trace:                   36.01 MB\n") != std::string::npos);
  // Raw: 32 × 1,500,216 + 128 + 393,216 + 512 = 48,400,768 bytes: 62M (61M leaves 48,234,906).
  CHECK(o.find("Estimated memory requirements (PROF_TOTAL_MEMORY):         62M\n") != std::string::npos);
  CHECK(o.find("\n500,000 visits folded below PROF_PROFILING_MAX_CALLPATH_DEPTH=3 are counted in the estimates "
               "(as visits of the region at the cutoff)\n") != std::string::npos);
  CHECK(o.find("        ALL       36,005,253      1,500,218   14.000000   100.0           9.33  ALL\n") != std::string::npos);
  CHECK(o.find("        USR       36,000,000      1,500,000    1.000000     7.1           0.67  tiny\n") != std::string::npos);

  const auto j = score(d, "--json " + d.path);
  INFO(j.out);
  REQUIRE(j.rc == 0);
  CHECK(j.out.find("\"folded_visits\": 500000,\n  \"folded_depth\": 3,\n  \"folded_note\": \"500,000 visits folded below "
                   "PROF_PROFILING_MAX_CALLPATH_DEPTH=3 are counted in the estimates (as visits of the region at the cutoff)\"") !=
        std::string::npos);
  CHECK(j.out.find("\"total_memory_text\": \"62M\"") != std::string::npos);
  CHECK(j.out.find("\"name\": \"tiny\", \"max_buf\": 36000000, \"trace_bytes\": 36000000, \"visits\": 1500000, \"time\": 1, "
                   "\"time_percent\": 7.14285714, \"time_per_visit_us\": 0.666666667, \"folded_visits\": 500000,") != std::string::npos);

  // A filter that removes the region at the cutoff removes its folded visits with it.
  {
    std::ofstream f(d.file("f.filter"));
    f << "SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE tiny\nSCOREP_REGION_NAMES_END\n";
  }
  const auto flt = score(d, "-f " + d.file("f.filter") + " " + d.path);
  CHECK(flt.out.find("  +     FLT       36,000,000      1,500,000    1.000000     7.1           0.67  FLT\n") != std::string::npos);

  // Without the metric (an older profile, or Score-P's): no line, no JSON fields.
  Dir plain;
  written(plain);
  const auto q = score(plain, "--json " + plain.path);
  CHECK(q.out.find("\"folded_visits\": 0,\n  \"folded_depth\": null") != std::string::npos);
  CHECK(q.out.find("folded_note") == std::string::npos);
  CHECK(score(plain, plain.path).out.find("folded below") == std::string::npos);
}

TEST_CASE("prof-score -f: rules that match no function are named, with the pattern that works (issue 30)", "[prof_score]") {
  Dir d;
  written(d);
  {
    std::ofstream f(d.file("f.filter"));
    // ns::step: the region is "ns::step()"; pthread_*: pthread_create is not filterable.
    f << "PROF_REGION_NAMES_BEGIN\n  EXCLUDE tiny\n  EXCLUDE ns::step\n  EXCLUDE pthread_*\nPROF_REGION_NAMES_END\n";
  }
  const std::string f = d.file("f.filter");
  auto r = score(d, "-f " + f + " " + d.path);
  INFO(r.out << r.err);
  REQUIRE(r.rc == 0);
  CHECK(r.out.find("\n(hint: 2 rules of " + f + " match no function of this profile that a filter applies to: " + f +
                   ":3 EXCLUDE ns::step (a C++ name carries its signature: use ns::step(*), which matches ns::step()), " + f +
                   ":4 EXCLUDE pthread_*; correct their patterns or remove them)\n") != std::string::npos);
  const auto j = score(d, "--json -f " + f + " " + d.path);
  INFO(j.out);
  CHECK(j.out.find("\"unmatched_filter_rules\": [{\"file\": \"" + f + "\", \"line\": 3, \"rule\": \"EXCLUDE\", \"pattern\": \"ns::step\", "
                   "\"file_names\": false, \"suggestion\": \"ns::step(*)\"}, {\"file\": \"" + f + "\", \"line\": 4") != std::string::npos);
  // -g copies the rules of -f and notes those that match nothing
  r = score(d, "-f " + f + " -g all -o " + d.file("g.filter") + " " + d.path);
  REQUIRE(r.rc == 0);
  const std::string text = slurp(d.file("g.filter"));
  INFO(text);
  CHECK(text.find("\n# note: 2 rules of " + f + " match no function") < text.find("# --- the rules of"));
  // every rule matches: no hint
  {
    std::ofstream g(d.file("ok.filter"));
    g << "PROF_REGION_NAMES_BEGIN\n  EXCLUDE tiny ns::step(*)\nPROF_REGION_NAMES_END\n";
  }
  r = score(d, "-f " + d.file("ok.filter") + " " + d.path);
  REQUIRE(r.rc == 0);
  CHECK(r.out.find("match no function") == std::string::npos);
  CHECK(score(d, "--json -f " + d.file("ok.filter") + " " + d.path).out.find("\"unmatched_filter_rules\": []") != std::string::npos);
}

TEST_CASE("prof-score -g: a function named like a filter keyword gets a pattern that parses and matches", "[prof_score]") {
  Dir d;
  cube4::Profile p;
  p.regions.push_back({"prog", "prog", "", -1, -1, "measurement", "artificial"});
  p.regions.push_back({"main", "main", "/src/k.c", 1, 9, "compiler", "function"});
  p.regions.push_back({"MANGLED", "MANGLED", "/src/k.c", 10, 19, "compiler", "function"});
  p.regions.push_back({"INCLUDE", "INCLUDE", "/src/k.c", 20, 29, "compiler", "function"});
  p.cnodes = {{0, -1}, {1, 0}, {2, 1}, {3, 1}};
  p.locations = {"Master thread"};
  p.visits = {1, 1, 100, 100};
  p.time_incl = {1.0, 0.9, 0.2, 0.2};
  p.min_time = p.max_time = {1.0, 0.9, 0.002, 0.002};
  std::string err;
  REQUIRE(cube4::write(d.file("profile.cubex"), p, &err));
  const auto r = score(d, "-g all -o " + d.file("k.filter") + " " + d.path);
  INFO(r.out << r.err);
  REQUIRE(r.rc == 0);
  INFO(slurp(d.file("k.filter")));
  prof::filter::Filter f;
  REQUIRE(f.load(d.file("k.filter"), &err));
  CHECK(f.excluded("MANGLED", "", ""));
  CHECK(f.excluded("INCLUDE", "", ""));
  CHECK(f.excluded("main", "", ""));
  CHECK_FALSE(f.excluded("other", "", ""));
}
