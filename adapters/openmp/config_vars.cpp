// SPDX-License-Identifier: BSD-3-Clause
// The OpenMP adapter's configuration variables (namespace "OPENMP", so PROF_OPENMP_<NAME>).
#include "measurement/config/config.hpp"

namespace prof::config {

namespace {

// `all`, `default` and `none` are accepted by every Set; they are not listed here.
const Member kOpenMPMembers[] = {
    {"parallel", kOmpParallel,
     "parallel regions: fork/join and thread team events, the region on every team thread, "
     "the implicit barrier at its end"},
    {"barrier", kOmpBarrier, "explicit and implicit barriers"},
    {"loop", kOmpLoop, "worksharing: loops, sections, single, master/masked"},
    {"sync", kOmpSync, "critical sections, ordered and atomic regions the runtime reports, with lock events"},
    {"task", kOmpTask, "task creation and execution, taskwait, taskgroup"},
    {"lock", kOmpLock, "`omp_*_lock` and `omp_*_nest_lock` calls as regions, with OTF2 lock acquire/release events"},
    {nullptr, 0, nullptr},
};

}  // namespace

const Var kOpenMPVars[] = {
    {"ENABLE", Type::Set, "parallel,barrier,loop,sync,task", &g_values.openmp_enable,
     "Which OpenMP constructs are recorded.",
     "The OpenMP adapter records what the program's OpenMP runtime does: with LLVM's libomp "
     "(clang -fopenmp) through the OpenMP tools interface OMPT, with GCC's libgomp (gcc, g++, "
     "gfortran -fopenmp) by wrapping its GOMP_* entry points. Parallel regions appear as "
     "\"!$omp parallel @file:line\" on every thread of the team (one OTF2 location per "
     "thread, the encountering thread keeps its own) with OTF2 fork/join and thread team "
     "events; the compiler's outlined bodies (main._omp_fn.0, .omp_outlined.) are not "
     "regions of their own. `parallel` is the base of the others: without it nothing of "
     "OpenMP is recorded.\n\n"
     "`lock` is off by default: like PROF_PTHREAD_ENABLE's `mutex`, it costs every lock "
     "operation of the program a region and a lock event (bench/openmp.sh, "
     "docs/PERFORMANCE.md); `PROF_OPENMP_ENABLE=default,lock` or `all` adds it. "
     "`none` records no OpenMP construct (team threads still get their locations when "
     "they call instrumented code).",
     kOpenMPMembers},
    {},
};

}  // namespace prof::config
