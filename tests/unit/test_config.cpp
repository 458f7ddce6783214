// SPDX-License-Identifier: BSD-3-Clause
// Unit tests of the configuration variables: parsing, load(), formatting, documentation.
#include <catch2/catch.hpp>

#include <cctype>
#include <set>
#include <string>
#include <vector>

#include "measurement/config/config.hpp"

using namespace prof::config;

namespace {

struct Found {
  const Table* table;
  const Var* var;
};

Found find(const std::string& env) {
  const Table* table = nullptr;
  const Var* var = find_var(env, &table);
  REQUIRE(var != nullptr);
  return {table, var};
}

/// Parses `value` into the variable named `env`; returns the error ("" on success).
std::string parse_error(const std::string& env, const std::string& value) {
  const Found f = find(env);
  std::string error;
  const bool ok = parse(*f.table, *f.var, value, &error);
  CHECK(ok == error.empty());
  return error;
}

std::string current(const std::string& env) {
  const Found f = find(env);
  return current_value(*f.table, *f.var);
}

/// Every variable back to its default.
void reset() {
  const char* const envp[] = {nullptr};
  std::string error;
  REQUIRE(load(envp, &error, nullptr));
}

}  // namespace

TEST_CASE("every default parses and load() with no environment applies them", "[config]") {
  for (const Table& t : tables()) {
    for (const Var* var = t.vars; var->name; ++var) {
      std::string error;
      INFO(env_name(t, *var));
      CHECK(parse(t, *var, var->default_value, &error));
      CHECK(error.empty());
    }
  }
  g_values = Values{};
  g_values.enable_tracing = true;
  g_values.total_memory = 1;
  reset();
  const Values fresh;   // the header's initialisers must agree with the table defaults
  CHECK(g_values.enable_profiling == fresh.enable_profiling);
  CHECK(g_values.enable_tracing == fresh.enable_tracing);
  CHECK(g_values.total_memory == fresh.total_memory);
  CHECK(g_values.page_size == fresh.page_size);
  CHECK(g_values.experiment_directory == fresh.experiment_directory);
  CHECK(g_values.overwrite_experiment_directory == fresh.overwrite_experiment_directory);
  CHECK(g_values.timer == fresh.timer);
  CHECK(g_values.verbose == fresh.verbose);
  CHECK(g_values.pthread_enable == kPthreadCreate);
}

TEST_CASE("the tables are well formed", "[config]") {
  REQUIRE(tables().size() == 5);
  CHECK(std::string(tables()[0].ns).empty());
  CHECK(std::string(tables()[1].ns) == "PTHREAD");
  CHECK(std::string(tables()[2].ns) == "MPI");
  CHECK(env_name(tables()[2], kMpiVars[0]) == "PROF_MPI_ENABLE_GROUPS");
  CHECK(std::string(tables()[3].ns) == "CUDA");
  CHECK(env_name(tables()[3], kCudaVars[0]) == "PROF_CUDA_ENABLE");
  CHECK(std::string(tables()[4].ns) == "OPENMP");
  CHECK(env_name(tables()[4], kOpenMPVars[0]) == "PROF_OPENMP_ENABLE");
  CHECK(env_name(tables()[0], kCoreVars[0]) == "PROF_ENABLE_PROFILING");
  CHECK(env_name(tables()[1], kPthreadVars[0]) == "PROF_PTHREAD_ENABLE");
  std::set<std::string> names;
  for (const Table& t : tables()) {
    for (const Var* var = t.vars; var->name; ++var) {
      const std::string name = env_name(t, *var);
      INFO(name);
      CHECK(names.insert(name).second);
      for (char c : name) CHECK((std::isupper(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_'));
      CHECK(var->target != nullptr);
      CHECK(*var->short_help != '\0');
      CHECK(*var->long_help != '\0');
      const bool has_members = var->type == Type::Set || var->type == Type::Option;
      CHECK((var->members != nullptr) == has_members);
      for (const Member* m = var->members; m && m->name; ++m) {
        const std::string member = m->name;
        INFO(member);
        for (const char* reserved : {"all", "default", "none", "no"}) CHECK(member != reserved);
        for (char c : member) CHECK(!std::isupper(static_cast<unsigned char>(c)));
      }
    }
  }
}

TEST_CASE("Bool accepts its forms and rejects anything else", "[config]") {
  reset();
  const std::vector<std::pair<std::string, bool>> good = {
      {"true", true}, {"TRUE", true}, {"yes", true}, {"On", true}, {"1", true},
      {"false", false}, {"No", false}, {"OFF", false}, {"0", false}, {"  true \t", true},
      {" 0\n", false}};
  for (const auto& [value, expected] : good) {
    INFO(value);
    g_values.enable_tracing = !expected;
    CHECK(parse_error("PROF_ENABLE_TRACING", value).empty());
    CHECK(g_values.enable_tracing == expected);
  }
  CHECK(parse_error("PROF_ENABLE_TRACING", "maybe") ==
        "PROF_ENABLE_TRACING='maybe' is not a boolean; use true/false, yes/no, on/off or 1/0");
  for (const std::string bad : {"y", "enable", "TRUE x", "", "2", "10", "truee"}) {
    INFO(bad);
    CHECK(parse_error("PROF_ENABLE_TRACING", bad) ==
          "PROF_ENABLE_TRACING='" + bad +
              "' is not a boolean; use true/false, yes/no, on/off or 1/0");
  }
  CHECK(g_values.enable_tracing == false);   // a failed parse leaves the value alone
}

TEST_CASE("Size accepts its forms and rejects anything else", "[config]") {
  reset();
  const std::vector<std::pair<std::string, std::uint64_t>> good = {
      {"16M", 16u << 20}, {"16MB", 16u << 20}, {"16 mb", 16u << 20}, {"8k", 8u << 10},
      {"1024", 1024}, {"2G", std::uint64_t{2} << 30}, {"1T", std::uint64_t{1} << 40},
      {" 64K ", 64u << 10}, {"100b", 100}, {"0", 0}, {"16777215T", std::uint64_t{16777215} << 40}};
  for (const auto& [value, expected] : good) {
    INFO(value);
    CHECK(parse_error("PROF_TOTAL_MEMORY", value).empty());
    CHECK(g_values.total_memory == expected);
  }
  CHECK(parse_error("PROF_TOTAL_MEMORY", "12Q") ==
        "PROF_TOTAL_MEMORY='12Q' is not a size; use a number with an optional K, M or G suffix, "
        "e.g. 64M");
  for (const std::string bad : {"", "M", "-1M", "1.5M", "16 M B", "16MiB", "16M x", "0x10", "16BB"}) {
    INFO(bad);
    CHECK(parse_error("PROF_TOTAL_MEMORY", bad) ==
          "PROF_TOTAL_MEMORY='" + bad +
              "' is not a size; use a number with an optional K, M or G suffix, e.g. 64M");
  }
  for (const std::string big : {"99999999999999999999G", "18446744073709551616", "16777216T"}) {
    INFO(big);
    CHECK(parse_error("PROF_TOTAL_MEMORY", big) ==
          "PROF_TOTAL_MEMORY='" + big +
              "' is too large; use a size below 16777216T (2^64 bytes), e.g. 64M");
  }
  CHECK(parse_error("PROF_TOTAL_MEMORY", "18446744073709551615").empty());
}

TEST_CASE("PAGE_SIZE must be a power of two of at least 4K", "[config]") {
  reset();
  CHECK(parse_error("PROF_PAGE_SIZE", "4K").empty());
  CHECK(parse_error("PROF_PAGE_SIZE", "1M").empty());
  CHECK(g_values.page_size == 1u << 20);
  CHECK(parse_error("PROF_PAGE_SIZE", "2K") ==
        "PROF_PAGE_SIZE='2K' is out of range; use a size of at least 4K that is a power of two, "
        "e.g. 64K");
  CHECK(parse_error("PROF_PAGE_SIZE", "5000") ==
        "PROF_PAGE_SIZE='5000' is not a power of two; use a size of at least 4K that is a power "
        "of two, e.g. 64K");
  CHECK(g_values.page_size == 1u << 20);
}

TEST_CASE("Number accepts decimal integers in range and rejects anything else", "[config]") {
  reset();
  for (const std::string good : {"0", "1", " 2 ", "002"}) {
    INFO(good);
    CHECK(parse_error("PROF_VERBOSE", good).empty());
  }
  CHECK(g_values.verbose == 2);
  CHECK(parse_error("PROF_VERBOSE", "x") ==
        "PROF_VERBOSE='x' is not a number; use a non-negative decimal integer, e.g. 1");
  for (const std::string bad : {"", "-1", "+1", "1.0", "1 2", "0x1", "1k"}) {
    INFO(bad);
    CHECK(parse_error("PROF_VERBOSE", bad) ==
          "PROF_VERBOSE='" + bad + "' is not a number; use a non-negative decimal integer, e.g. 1");
  }
  CHECK(parse_error("PROF_VERBOSE", "3") ==
        "PROF_VERBOSE='3' is out of range; use a number of at most 2, e.g. 0");
  CHECK(parse_error("PROF_VERBOSE", "99999999999999999999") ==
        "PROF_VERBOSE='99999999999999999999' is too large; use a number below "
        "18446744073709551616 (2^64), e.g. 1");
  CHECK(g_values.verbose == 2);
}

TEST_CASE("Path and String are taken verbatim", "[config]") {
  reset();
  for (const std::string value : {"", " spaced dir ", "a'b", "/tmp/x y/z", "~"}) {
    CHECK(parse_error("PROF_EXPERIMENT_DIRECTORY", value).empty());
    CHECK(g_values.experiment_directory == value);
  }
}

TEST_CASE("Set: members, aliases, ~, all, default, none", "[config]") {
  reset();
  const std::vector<std::pair<std::string, std::uint64_t>> good = {
      {"create", kPthreadCreate},
      {"mutex,cond", kPthreadMutex | kPthreadCond},
      {" Mutex ; COND ", kPthreadMutex | kPthreadCond},
      {"mutex cond:create", kPthreadCreate | kPthreadMutex | kPthreadCond},
      {"create,,mutex,", kPthreadCreate | kPthreadMutex},
      {"all", kPthreadCreate | kPthreadMutex | kPthreadCond},
      {"all,~mutex", kPthreadCreate | kPthreadCond},
      {"default", kPthreadCreate},
      {"default,cond", kPthreadCreate | kPthreadCond},
      {"all,~default", kPthreadMutex | kPthreadCond},
      {"~create,create", kPthreadCreate},
      {"none", 0},
      {"NO", 0},
      {"", 0},
      {"  ", 0},
      {"all,none,mutex", kPthreadMutex},
  };
  for (const auto& [value, expected] : good) {
    INFO(value);
    g_values.pthread_enable = 0xff;
    CHECK(parse_error("PROF_PTHREAD_ENABLE", value).empty());
    CHECK(g_values.pthread_enable == expected);
  }
  CHECK(parse_error("PROF_PTHREAD_ENABLE", "create,join") ==
        "PROF_PTHREAD_ENABLE='create,join' has the unknown value 'join'; use a comma list of "
        "create, mutex, cond, all, default or none, e.g. create,mutex");
  CHECK(parse_error("PROF_PTHREAD_ENABLE", "~") ==
        "PROF_PTHREAD_ENABLE='~' has the unknown value '~'; use a comma list of "
        "create, mutex, cond, all, default or none, e.g. create,mutex");
  CHECK(parse_error("PROF_PTHREAD_ENABLE", "~none") ==
        "PROF_PTHREAD_ENABLE='~none' has the unknown value '~none'; use a comma list of "
        "create, mutex, cond, all, default or none, e.g. create,mutex");
  CHECK(g_values.pthread_enable == kPthreadMutex);
}

TEST_CASE("Set and Option accept aliases", "[config]") {
  // A private table: the real tables have no aliases yet.
  static const Member members[] = {
      {"default/yes/1", 1, "d"}, {"extra", 2, "e"}, {nullptr, 0, nullptr}};
  static std::uint64_t set = 0;
  static std::uint64_t option = 0;
  static const Var vars[] = {
      {"GROUPS", Type::Set, "extra", &set, "s", "l", members},
      {"MODE", Type::Option, "yes", &option, "s", "l", members},
      {},
  };
  const Table table{"TEST", vars};
  std::string error;
  CHECK(parse(table, vars[0], "YES,extra", &error));
  CHECK(set == 3);
  CHECK(parse(table, vars[0], "1", &error));
  CHECK(set == 1);
  CHECK(current_value(table, vars[0]) == "default");
  CHECK(parse(table, vars[1], " Yes ", &error));
  CHECK(option == 1);
  CHECK(current_value(table, vars[1]) == "default");
  CHECK(!parse(table, vars[1], "no", &error));
  CHECK(error == "PROF_TEST_MODE='no' is not an accepted value; use one of default, yes, 1 or extra");
}

TEST_CASE("Option accepts exactly one member", "[config]") {
  reset();
  const std::vector<std::pair<std::string, std::uint64_t>> good = {
      {"tsc", kTimerTsc}, {"CLOCK_GETTIME", kTimerClockGettime}, {" auto ", kTimerAuto}};
  for (const auto& [value, expected] : good) {
    INFO(value);
    CHECK(parse_error("PROF_TIMER", value).empty());
    CHECK(g_values.timer == expected);
  }
  for (const std::string bad : {"rdtsc", "", "tsc,auto", "all", "default"}) {
    INFO(bad);
    CHECK(parse_error("PROF_TIMER", bad) ==
          "PROF_TIMER='" + bad + "' is not an accepted value; use one of auto, tsc or clock_gettime");
  }
  CHECK(g_values.timer == kTimerAuto);
}

TEST_CASE("messages stay on one line", "[config]") {
  CHECK(parse_error("PROF_ENABLE_TRACING", "a\nb\x01") ==
        "PROF_ENABLE_TRACING='a\\nb\\x01' is not a boolean; use true/false, yes/no, on/off or 1/0");
}

TEST_CASE("load() applies the environment and stops at the first error", "[config]") {
  std::string error;
  std::vector<std::string> warnings;

  SECTION("values are applied") {
    const char* const envp[] = {"HOME=/root", "PROF_ENABLE_TRACING=yes", "PROF_TOTAL_MEMORY=64M",
                                "PROF_PTHREAD_ENABLE=all", "PROF_TIMER=tsc",
                                "PROF_EXPERIMENT_DIRECTORY=out dir", "PROF_WRAPPER=gcc",
                                "PROF_WRAPPER_INSTRUMENTER_FLAGS=x",
                                "PROF_WRAPPER_COMPILER_FLAGS=-O2", "PROF_TIMER=clock_gettime",
                                nullptr};
    CHECK(load(envp, &error, &warnings));
    CHECK(error.empty());
    CHECK(warnings.empty());
    CHECK(g_values.enable_tracing);
    CHECK(g_values.total_memory == 64u << 20);
    CHECK(g_values.pthread_enable == (kPthreadCreate | kPthreadMutex | kPthreadCond));
    CHECK(g_values.timer == kTimerTsc);   // the first occurrence wins, as with getenv
    CHECK(g_values.experiment_directory == "out dir");
    CHECK(g_values.page_size == 64u << 10);   // untouched: the default
  }

  SECTION("defaults are restored by a new load") {
    const char* const first[] = {"PROF_VERBOSE=2", nullptr};
    CHECK(load(first, &error, &warnings));
    CHECK(g_values.verbose == 2);
    const char* const second[] = {nullptr};
    CHECK(load(second, &error, &warnings));
    CHECK(g_values.verbose == 0);
    CHECK(load(nullptr, &error, &warnings));
  }

  SECTION("the first malformed value stops it") {
    const char* const envp[] = {"PROF_PTHREAD_ENABLE=bogus", "PROF_VERBOSE=1",
                                "PROF_TOTAL_MEMORY=12Q", "PROF_ENABLE_TRACING=maybe", nullptr};
    CHECK(!load(envp, &error, &warnings));
    // Table order decides which is first: ENABLE_TRACING precedes TOTAL_MEMORY in the core.
    CHECK(error ==
          "PROF_ENABLE_TRACING='maybe' is not a boolean; use true/false, yes/no, on/off or 1/0");
    CHECK(g_values.verbose == 0);   // comes after the error: not applied
  }

  SECTION("unknown PROF_ names warn with the nearest name") {
    const char* const envp[] = {"PROF_ENABLE_TRACNG=true", "PROF_enable_tracing=1",
                                "PROF_COMPLETELY_DIFFERENT=1", "PROF_WRAPPER=g++",
                                "PROFILE=1", "MY_PROF_X=1", "PROF_PTHREAD_ENABLED=all", nullptr};
    CHECK(load(envp, &error, &warnings));
    CHECK(!g_values.enable_tracing);
    REQUIRE(warnings.size() == 4);
    CHECK(warnings[0] ==
          "PROF_ENABLE_TRACNG is not a known variable; did you mean PROF_ENABLE_TRACING?");
    CHECK(warnings[1] ==
          "PROF_enable_tracing is not a known variable; did you mean PROF_ENABLE_TRACING?");
    CHECK(warnings[2] ==
          "PROF_COMPLETELY_DIFFERENT is not a known variable; run prof-info config-vars for the list");
    CHECK(warnings[3] ==
          "PROF_PTHREAD_ENABLED is not a known variable; did you mean PROF_PTHREAD_ENABLE?");
  }

  SECTION("warnings are produced even when a value is malformed") {
    const char* const envp[] = {"PROF_VERBOSE=9", "PROF_VERBOS=1", nullptr};
    CHECK(!load(envp, &error, &warnings));
    CHECK(error == "PROF_VERBOSE='9' is out of range; use a number of at most 2, e.g. 0");
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0] == "PROF_VERBOS is not a known variable; did you mean PROF_VERBOSE?");
  }

  SECTION("an unknown name's control characters are escaped: the warning stays one line") {
    // Found by tests/fuzz/fuzz_config (corpus/config/crash-unknown-name-control-characters).
    const char* const envp[] = {"PROF_PROFILING_MAX_CALLPATH\r\nDEPTH=1", nullptr};
    CHECK(load(envp, &error, &warnings));
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0] == "PROF_PROFILING_MAX_CALLPATH\\x0d\\nDEPTH is not a known variable; did you mean "
                         "PROF_PROFILING_MAX_CALLPATH_DEPTH?");
  }
  reset();
}

TEST_CASE("current_value formats the value in effect and round-trips", "[config]") {
  reset();
  CHECK(current("PROF_TOTAL_MEMORY") == "16M");
  CHECK(current("PROF_PAGE_SIZE") == "64K");
  CHECK(current("PROF_ENABLE_PROFILING") == "true");
  CHECK(current("PROF_TIMER") == "auto");
  CHECK(current("PROF_PTHREAD_ENABLE") == "create");
  CHECK(current("PROF_EXPERIMENT_DIRECTORY").empty());

  const std::vector<std::pair<std::string, std::string>> cases = {
      {"PROF_TOTAL_MEMORY", "1000"}, {"PROF_TOTAL_MEMORY", "1536K"}, {"PROF_TOTAL_MEMORY", "2G"},
      {"PROF_TOTAL_MEMORY", "3T"}, {"PROF_TOTAL_MEMORY", "0"}, {"PROF_ENABLE_TRACING", "true"},
      {"PROF_VERBOSE", "2"}, {"PROF_TIMER", "clock_gettime"}, {"PROF_PTHREAD_ENABLE", "none"},
      {"PROF_PTHREAD_ENABLE", "create,mutex,cond"}, {"PROF_PTHREAD_ENABLE", "create,cond"},
      {"PROF_EXPERIMENT_DIRECTORY", " it's here "}};
  for (const auto& [env, value] : cases) {
    INFO(env << "=" << value);
    REQUIRE(parse_error(env, value).empty());
    const std::string formatted = current(env);
    CHECK(formatted == value);
    const Values before = g_values;
    REQUIRE(parse_error(env, formatted).empty());
    CHECK(current(env) == formatted);
    CHECK(g_values.total_memory == before.total_memory);
    CHECK(g_values.pthread_enable == before.pthread_enable);
  }
  CHECK(parse_error("PROF_TOTAL_MEMORY", "1048576").empty());
  CHECK(current("PROF_TOTAL_MEMORY") == "1M");
  CHECK(parse_error("PROF_PTHREAD_ENABLE", "cond,create").empty());
  CHECK(current("PROF_PTHREAD_ENABLE") == "create,cond");
  reset();
}

TEST_CASE("cfg_file_text lists every variable and quotes strings for sh", "[config]") {
  reset();
  REQUIRE(parse_error("PROF_EXPERIMENT_DIRECTORY", "/tmp/it's mine").empty());
  const std::string text = cfg_file_text();
  CHECK(text ==
        "PROF_ENABLE_PROFILING=true\n"
        "PROF_ENABLE_TRACING=false\n"
        "PROF_TOTAL_MEMORY=16M\n"
        "PROF_PAGE_SIZE=64K\n"
        "PROF_EXPERIMENT_DIRECTORY='/tmp/it'\\''s mine'\n"
        "PROF_OVERWRITE_EXPERIMENT_DIRECTORY=true\n"
        "PROF_FLUSH_SIGNAL=''\n"
        "PROF_FAIL_EXIT_STATUS=0\n"
        "PROF_STEP=''\n"
        "PROF_STOP_DUMP_MIN=512M\n"
        "PROF_DEBUG_WRITE_PAUSE=0\n"
        "PROF_TIMER=auto\n"
        "PROF_VERBOSE=0\n"
        "PROF_PROFILING_MAX_CALLPATH_DEPTH=100\n"
        "PROF_FILTERING_FILE=''\n"
        "PROF_THROTTLE=true\n"
        "PROF_THROTTLE_VISITS=1000\n"
        "PROF_THROTTLE_NS=300\n"
        "PROF_PROFILING_BASE_NAME='profile'\n"
        "PROF_SUMMARY=false\n"
        "PROF_SAMPLING_EVENTS=''\n"
        "PROF_ENABLE_UNWINDING=true\n"
        "PROF_SAMPLING_DEBUG_REFUSE=''\n"
        "PROF_METRIC_PAPI=''\n"
        "PROF_METRIC_PAPI_PER_PROCESS=''\n"
        "PROF_METRIC_PAPI_SEP=','\n"
        "PROF_METRIC_PERF=''\n"
        "PROF_METRIC_PERF_SEP=','\n"
        "PROF_METRIC_RUSAGE=''\n"
        "PROF_METRIC_RUSAGE_SEP=','\n"
        "PROF_PTHREAD_ENABLE=create\n" "PROF_PTHREAD_REUSE_AFTER=16\n"
        "PROF_MPI_ENABLE_GROUPS=cg,coll,env,io,p2p,rma,topo\n"
        "PROF_MPI_FINALIZE_TIMEOUT=60\n"
        "PROF_MPI_DEBUG_CLOCK_SKEW=''\n"
        "PROF_CUDA_ENABLE=runtime,kernel,memcpy,memset,sync,nvtx\n"
        "PROF_CUDA_BUFFER=8M\n"
        "PROF_OPENMP_ENABLE=parallel,barrier,loop,sync,task\n");
  reset();
  CHECK(cfg_file_text().find("PROF_EXPERIMENT_DIRECTORY=''\n") != std::string::npos);
}

TEST_CASE("the generated documentation covers every variable", "[config]") {
  const std::string text = vars_text(false);
  const std::string full = vars_text(true);
  const std::string markdown = vars_markdown();
  CHECK(text.find("PROF_TOTAL_MEMORY\n  Description: Memory for all measurement data of one "
                  "process.\n         Type: Size\n      Default: 16M\n") != std::string::npos);
  CHECK(markdown.find("generated by `prof-info config-vars --markdown`") != std::string::npos);
  for (const Table& t : tables()) {
    for (const Var* var = t.vars; var->name; ++var) {
      const std::string name = env_name(t, *var);
      INFO(name);
      CHECK(text.find(name + "\n") != std::string::npos);
      CHECK(markdown.find("## " + name + "\n") != std::string::npos);
    }
  }
  CHECK(text.find("Full description") == std::string::npos);
  CHECK(full.find("    mutex: `pthread_mutex_*` calls as regions") != std::string::npos);
  CHECK(full.find("    none/no: nothing") != std::string::npos);
  std::size_t start = 0;
  while (start < full.size()) {
    const std::size_t end = full.find('\n', start);
    CHECK(end - start <= 80);
    start = end + 1;
  }
  CHECK(constraints(*find("PROF_PAGE_SIZE").var) == "a size of at least 4K that is a power of two");
  CHECK(constraints(*find("PROF_VERBOSE").var) == "a number of at most 2");
  CHECK(constraints(*find("PROF_TOTAL_MEMORY").var).empty());
}

TEST_CASE("messages quote the value as the user wrote it (issue 15, defect 9)", "[config]") {
  reset();
  // A Set's unknown item keeps its spelling (it was lowered: '16mjunk' for 16Mjunk).
  CHECK(parse_error("PROF_CUDA_ENABLE", "Kernel,16Mjunk") ==
        "PROF_CUDA_ENABLE='Kernel,16Mjunk' has the unknown value '16Mjunk'; use a comma list of runtime, driver, "
        "kernel, memcpy, memset, sync, nvtx, query, all, default or none, e.g. runtime,driver");
  CHECK(parse_error("PROF_PTHREAD_ENABLE", "MUTEX,~Join") ==
        "PROF_PTHREAD_ENABLE='MUTEX,~Join' has the unknown value '~Join'; use a comma list of "
        "create, mutex, cond, all, default or none, e.g. create,mutex");
  // given_text: the text in effect, not the normalised value ('1K', not 1024 bytes).
  const char* const envp[] = {"PROF_TOTAL_MEMORY=1K", "PROF_PAGE_SIZE= 8k", "PROF_VERBOSE=002", nullptr};
  std::string error;
  REQUIRE(load(envp, &error, nullptr));
  CHECK(g_values.total_memory == 1024);
  CHECK(given_text("PROF_TOTAL_MEMORY") == "1K");
  CHECK(given_text("PROF_PAGE_SIZE") == " 8k");
  CHECK(given_text("PROF_VERBOSE") == "002");
  CHECK(given_text("PROF_TIMER") == "auto");  // not in the environment: the default's text
  CHECK(given_text("PROF_NO_SUCH_VARIABLE").empty());
  reset();
  CHECK(given_text("PROF_TOTAL_MEMORY") == "16M");
  // Long values are cut, so that a message stays one readable line.
  const std::string long_value(102400, 'a');
  CHECK(quoted("short") == "'short'");
  CHECK(quoted(long_value) == "'" + std::string(40, 'a') + "...' (102400 characters)");
  CHECK(parse_error("PROF_ENABLE_TRACING", long_value) ==
        "PROF_ENABLE_TRACING='" + std::string(40, 'a') +
            "...' (102400 characters) is not a boolean; use true/false, yes/no, on/off or 1/0");
}

TEST_CASE("PROFILING_BASE_NAME is a file name (issue 15, defect 3)", "[config]") {
  reset();
  for (const std::string good : {"profile", "run.v2", "a b", "x-1_2"}) {
    INFO(good);
    CHECK(parse_error("PROF_PROFILING_BASE_NAME", good).empty());
    CHECK(g_values.profiling_base_name == good);
  }
  CHECK(parse_error("PROF_PROFILING_BASE_NAME", "../../../../etc/passwd") ==
        "PROF_PROFILING_BASE_NAME='../../../../etc/passwd' contains '/'; give a file name without a directory, such "
        "as profile (PROF_EXPERIMENT_DIRECTORY chooses the directory)");
  CHECK(parse_error("PROF_PROFILING_BASE_NAME", "/tmp/p").find("contains '/'") != std::string::npos);
  CHECK(parse_error("PROF_PROFILING_BASE_NAME", "") ==
        "PROF_PROFILING_BASE_NAME='' is empty; give a file name such as profile");
  for (const std::string hidden : {".", "..", ".profile"}) {
    INFO(hidden);
    CHECK(parse_error("PROF_PROFILING_BASE_NAME", hidden) ==
          "PROF_PROFILING_BASE_NAME='" + hidden +
              "' starts with '.' (a hidden file, or a directory); give a file name such as profile");
  }
  CHECK(parse_error("PROF_PROFILING_BASE_NAME", "a\nb") ==
        "PROF_PROFILING_BASE_NAME='a\\nb' contains a control character; give a file name such as profile");
  CHECK(parse_error("PROF_PROFILING_BASE_NAME", std::string(200, 'p')).empty());
  CHECK(parse_error("PROF_PROFILING_BASE_NAME", std::string(201, 'p')) ==
        "PROF_PROFILING_BASE_NAME='" + std::string(201, 'p').substr(0, 40) +
            "...' (201 characters) is too long; give a file name of at most 200 characters, such as profile");
  CHECK(g_values.profiling_base_name == std::string(200, 'p'));  // a failed parse leaves the value alone
}

TEST_CASE("EXPERIMENT_DIRECTORY and FILTERING_FILE are checked for length and form (issue 15, defect 3)", "[config]") {
  reset();
  for (const std::string& good : std::vector<std::string>{"", "exp", "exp/", "/tmp/a/b", "../exp", std::string(200, 'd') + "/x"}) {
    INFO(good);
    CHECK(parse_error("PROF_EXPERIMENT_DIRECTORY", good).empty());
  }
  CHECK(parse_error("PROF_EXPERIMENT_DIRECTORY", std::string(102400, 'd')) ==
        "PROF_EXPERIMENT_DIRECTORY='" + std::string(40, 'd') +
            "...' (102400 characters) is too long; give a name of at most 3800 characters");
  CHECK(parse_error("PROF_EXPERIMENT_DIRECTORY", "a/" + std::string(201, 'd')) ==
        "PROF_EXPERIMENT_DIRECTORY='a/" + std::string(38, 'd') +
            "...' (203 characters) has a part of 201 characters between '/'; give a name whose parts have at most 200 "
            "characters");
  for (const std::string dot : {".", "..", "a/..", "./", "x/./"}) {
    INFO(dot);
    CHECK(parse_error("PROF_EXPERIMENT_DIRECTORY", dot) ==
          "PROF_EXPERIMENT_DIRECTORY='" + dot +
              "' names an existing directory ('.' or '..'), not one for this run; give a new name, e.g. exp");
  }
  CHECK(parse_error("PROF_EXPERIMENT_DIRECTORY", "//") ==
        "PROF_EXPERIMENT_DIRECTORY='//' names the root directory; give the name of a directory for this run, e.g. exp");
  CHECK(parse_error("PROF_FILTERING_FILE", std::string(5000, 'f')) ==
        "PROF_FILTERING_FILE='" + std::string(40, 'f') +
            "...' (5000 characters) is too long; give a name of at most 4095 characters");
  CHECK(parse_error("PROF_FILTERING_FILE", "my.filter").empty());
}

TEST_CASE("separators and test-only variables reject junk (issue 15, defect 9)", "[config]") {
  reset();
  for (const char* var : {"PROF_METRIC_PAPI_SEP", "PROF_METRIC_PERF_SEP", "PROF_METRIC_RUSAGE_SEP"}) {
    const std::string name = var;
    INFO(name);
    for (const std::string good : {",", ";", "|", "/", " ", "+", "#"}) {
      INFO(good);
      CHECK(parse_error(name, good).empty());
    }
    CHECK(parse_error(name, "") == name + "='' is not one character; give one such as , or ; (the default is ,)");
    CHECK(parse_error(name, ",,") == name + "=',,' is not one character; give one such as , or ; (the default is ,)");
    CHECK(parse_error(name, "junk") == name + "='junk' is not one character; give one such as , or ; (the default is ,)");
    for (const std::string used : {"a", "Z", "7", "_", ":", "-", ".", "=", "@"}) {
      INFO(used);
      CHECK(parse_error(name, used) == name + "='" + used + "' is a character that event names use; give one such as , or ;");
    }
    CHECK(parse_error(name, "\t") == name + "='\\t' is not a printable character; give one such as , or ;");
    CHECK(parse_error(name, "\xc3") == name + "='\xc3' is not a printable character; give one such as , or ;");
  }
  CHECK(g_values.metric_papi_sep == "#");

  for (const std::string good : {"", "hardware", "software", "hardware,software", "software,hardware"}) {
    INFO(good);
    CHECK(parse_error("PROF_SAMPLING_DEBUG_REFUSE", good).empty());
  }
  for (const auto& [bad, item] : std::vector<std::pair<std::string, std::string>>{
           {"junk", "junk"}, {"Hardware", "Hardware"}, {"hardware,", ""}, {"hardware software", "hardware software"}}) {
    INFO(bad);
    CHECK(parse_error("PROF_SAMPLING_DEBUG_REFUSE", bad) ==
          "PROF_SAMPLING_DEBUG_REFUSE='" + bad + "' has the item '" + item +
              "', which is neither hardware nor software; give hardware, software or hardware,software (tests only; "
              "leave it empty)");
  }

  for (const std::string good : {"", "1:2000000000", "0:1,3:999999999999999999"}) {
    INFO(good);
    CHECK(parse_error("PROF_MPI_DEBUG_CLOCK_SKEW", good).empty());
  }
  for (const auto& [bad, item] : std::vector<std::pair<std::string, std::string>>{
           {"junk", "junk"}, {" 1:5", " 1:5"}, {"-1:5", "-1:5"}, {"1:+5", "1:+5"}, {"1:5,", ""}, {"1:", "1:"},
           {":5", ":5"}, {"1:5x", "1:5x"}, {"1:9999999999999999999", "1:9999999999999999999"}}) {
    INFO(bad);
    CHECK(parse_error("PROF_MPI_DEBUG_CLOCK_SKEW", bad) ==
          "PROF_MPI_DEBUG_CLOCK_SKEW='" + bad + "' has the item '" + item +
              "', which is not rank:ticks; give e.g. 1:2000000000, or leave it empty");
  }
  reset();
}
