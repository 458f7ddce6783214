// SPDX-License-Identifier: BSD-3-Clause
// Configuration variables: declared once in tables, parsed once from the environment.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "measurement/immortal.hpp"

namespace prof::config {

/// Value types; each accepts the forms listed in type_forms().
enum class Type { Bool, Size, Number, String, Path, Set, Option };

/// A named member of a Set or Option variable ("create", "mutex", ...).
struct Member {
  const char* name;     ///< lower case; aliases separated by '/', e.g. "default/yes"
  std::uint64_t bits;   ///< Set: the bits this name stands for; Option: the value
  const char* help;
};

/// One variable. The environment name is "PROF_" + namespace + "_" + name (no '_' for the core).
struct Var {
  const char* name = nullptr;        ///< e.g. "ENABLE_TRACING"; nullptr terminates a table
  Type type = Type::Bool;
  const char* default_value = "";    ///< parsed like a user value
  void* target = nullptr;            ///< bool*, std::uint64_t* (Size/Number/Set/Option), std::string*
  const char* short_help = "";
  const char* long_help = "";
  const Member* members = nullptr;   ///< Set/Option: terminated by {nullptr}
  // Checks on Size and Number values, done by parse() and shown by prof-info.
  std::uint64_t min_value = 0;                       ///< smallest accepted value
  std::uint64_t max_value = ~std::uint64_t{0};       ///< largest accepted value
  bool power_of_two = false;                         ///< value must be a power of two
  /// String and Path values: a check beyond the type, done by parse() (nullptr: none). Returns
  /// "" when the value is fine, otherwise what is wrong and the fix, completing
  /// "PROF_X='value' ", e.g. "contains '/'; give a file name without a directory".
  std::string (*check)(std::string_view value) = nullptr;
  /// What `check` accepts, in words, for prof-info's "Accepts:" line (nullptr: nothing shown).
  const char* accepts = nullptr;
};

/// A table of variables of one namespace ("" for the core, "PTHREAD", later "MPI", "CUDA").
struct Table {
  const char* ns;
  const Var* vars;
};

/// Every table known to this build, core first; no static registration, so prof-info sees all.
const std::vector<Table>& tables();

/// "PROF_" + ns + "_" + name.
std::string env_name(const Table& table, const Var& var);

/// Parses `value` into `var.target`. On failure returns false and sets `error` to the
/// one-line message (without the "prof: error: " prefix), e.g.
/// "PROF_TOTAL_MEMORY='12Q' is not a size; use a number with an optional K, M or G suffix, e.g. 64M".
bool parse(const Table& table, const Var& var, std::string_view value, std::string* error);

/// `value` as messages quote it: in single quotes, control characters escaped, and one longer
/// than 80 characters cut to its first 40 and followed by its length ("'aaa...' (102400 characters)").
std::string quoted(std::string_view value);

/// The signal PROF_FLUSH_SIGNAL names: USR1, USR2, HUP or XCPU, with or without SIG, any
/// case, or its number; 0 for anything else (empty included).
int signal_of(std::string_view value);

/// Sets every variable to its default, then applies the environment. Returns false on the
/// first malformed value (error set). `warnings` receives one line per unknown PROF_* variable
/// ("PROF_ENABLE_TRACNG is not a known variable; did you mean PROF_ENABLE_TRACING?").
bool load(const char* const* envp, std::string* error, std::vector<std::string>* warnings);

/// The text the value in effect was parsed from, exactly as written (the environment's, or the
/// default's), for messages that quote the user: "PROF_TOTAL_MEMORY='1K' is too small ..."
/// rather than a normalised "1024 bytes". `env_name` as in find_var(); "" when unknown.
std::string given_text(std::string_view env_name);

/// The value in effect, formatted as it would be written in the environment
/// (sizes as given, e.g. "16M"; sets as the comma list of member names).
std::string current_value(const Table& table, const Var& var);

/// "NAME=value" lines for every variable (strings single-quoted), the content of prof.cfg.
std::string cfg_file_text();

/// Human-readable name of a type ("Boolean", "Size", ...).
const char* type_name(Type type);

/// The forms a type accepts, one sentence, e.g. "true/false, yes/no, on/off or 1/0 (any case)".
const char* type_forms(Type type);

/// The variable whose environment name is `env_name` ("PROF_ENABLE_TRACING"), or nullptr;
/// `table` (optional) receives its table. Exact, case-sensitive match.
const Var* find_var(std::string_view env_name, const Table** table = nullptr);

/// The checks beyond the type, in words ("at least 4K, a power of two", or a String's or Path's
/// `accepts`), or "" when none.
std::string constraints(const Var& var);

/// Every variable as name, description, type and default (`prof-info config-vars`);
/// `full` adds the long help wrapped at 80 columns and the accepted values of Sets/Options.
std::string vars_text(bool full);

/// The reference of every variable as markdown: the content of share/doc/config-vars.md.
std::string vars_markdown();

/// The core's table and the adapters' tables (terminated by a Var with name nullptr).
extern const Var kCoreVars[];
extern const Var kPthreadVars[];
extern const Var kMpiVars[];
extern const Var kCudaVars[];
extern const Var kOpenMPVars[];

/// The values parsed by load(): the core's variables and every adapter's.
struct Values {
  bool enable_profiling = true;
  bool enable_tracing = false;
  std::uint64_t total_memory = 16u << 20;
  std::uint64_t page_size = 64u << 10;
  std::string experiment_directory;
  bool overwrite_experiment_directory = true;
  std::uint64_t timer = 0;           ///< Timer option: 0 = auto, 1 = tsc, 2 = clock_gettime
  std::uint64_t verbose = 0;         ///< 0, 1 or 2
  std::uint64_t pthread_enable = 0;  ///< bits of PthreadFeature
  std::uint64_t pthread_reuse_after = 16;  ///< PROF_PTHREAD_REUSE_AFTER
  std::uint64_t mpi_enable_groups = 0;  ///< bits of MpiGroup
  std::uint64_t mpi_finalize_timeout = 60;  ///< seconds
  std::string mpi_debug_clock_skew;         ///< "rank:ticks,..." (tests)
  std::uint64_t cuda_enable = 0;            ///< bits of CudaFeature
  std::uint64_t openmp_enable = 0;          ///< bits of OpenMPFeature
  std::uint64_t cuda_buffer = 8u << 20;     ///< bytes of CUPTI activity buffers in all
  std::uint64_t profiling_max_callpath_depth = 100;
  std::string profiling_base_name = "profile";
  std::string flush_signal;  ///< PROF_FLUSH_SIGNAL as given (signal_of gives its number)
  std::uint64_t debug_write_pause = 0;  ///< PROF_DEBUG_WRITE_PAUSE (ms; tests)
  std::uint64_t stop_dump_min = 512u << 20;  ///< PROF_STOP_DUMP_MIN (bytes)
  std::string step;                         ///< PROF_STEP (for prof-report; recorded in prof.cfg)
  std::uint64_t fail_exit_status = 0;   ///< PROF_FAIL_EXIT_STATUS (0: off)
  bool summary = false;
  std::string filtering_file;
  bool throttle = true;                 ///< PROF_THROTTLE
  std::uint64_t throttle_visits = 1000; ///< PROF_THROTTLE_VISITS
  std::uint64_t throttle_ns = 300;      ///< PROF_THROTTLE_NS
  std::string sampling_events;       ///< PROF_SAMPLING_EVENTS, parsed by the sampler
  bool enable_unwinding = true;
  std::string sampling_debug_refuse;  ///< tests: "hardware", "software"
  std::string metric_papi, metric_papi_per_process, metric_papi_sep = ",";
  std::string metric_perf, metric_perf_sep = ",";
  std::string metric_rusage, metric_rusage_sep = ",";
};
enum TimerChoice : std::uint64_t { kTimerAuto = 0, kTimerTsc = 1, kTimerClockGettime = 2 };
enum PthreadFeature : std::uint64_t { kPthreadCreate = 1, kPthreadMutex = 2, kPthreadCond = 4 };
enum OpenMPFeature : std::uint64_t {
  kOmpParallel = 1, kOmpBarrier = 2, kOmpLoop = 4, kOmpSync = 8, kOmpTask = 16, kOmpLock = 32,
};
enum MpiGroup : std::uint64_t {
  kMpiCg = 1 << 0, kMpiColl = 1 << 1, kMpiEnv = 1 << 2, kMpiErr = 1 << 3, kMpiExt = 1 << 4, kMpiIo = 1 << 5,
  kMpiMisc = 1 << 6, kMpiP2p = 1 << 7, kMpiRma = 1 << 8, kMpiSpawn = 1 << 9, kMpiTopo = 1 << 10, kMpiType = 1 << 11,
  kMpiXnonblock = 1 << 12, kMpiXreqtest = 1 << 13,
};

enum CudaFeature : std::uint64_t {
  kCudaRuntime = 1 << 0, kCudaDriver = 1 << 1, kCudaKernel = 1 << 2, kCudaMemcpy = 1 << 3, kCudaMemset = 1 << 4,
  kCudaSync = 1 << 5, kCudaNvtx = 1 << 6, kCudaQuery = 1 << 7,
};

/// The one instance the tables point into.
extern Immortal<Values> g_values_storage;
/// The values themselves: constant-initialised storage that parse() (load()'s first step) and
/// current_value() build on first use and that is never destroyed (see measurement/immortal.hpp: init may run before libprof's static
/// initialisers, hooks after its destructors). Before the first load() every byte is zero.
inline constexpr Values& g_values = *g_values_storage.address();

}  // namespace prof::config
