// SPDX-License-Identifier: BSD-3-Clause
// The pthread adapter's configuration variables (namespace "PTHREAD", so PROF_PTHREAD_<NAME>).
#include "measurement/config/config.hpp"

namespace prof::config {

namespace {

// `all`, `default` and `none` are accepted by every Set; they are not listed here.
const Member kPthreadMembers[] = {
    {"create", kPthreadCreate,
     "thread create, begin, end and wait (join) events"},
    {"mutex", kPthreadMutex,
     "`pthread_mutex_*` calls as regions, with OTF2 lock acquire/release events"},
    {"cond", kPthreadCond,
     "`pthread_cond_*` calls as regions, with the lock release/acquire around each wait"},
    {nullptr, 0, nullptr},
};

}  // namespace

// The default leaves mutex and cond off: they add a region and a lock event to every lock
// operation of the program (bench/mutex.c, docs/PERFORMANCE.md).
const Var kPthreadVars[] = {
    {"ENABLE", Type::Set, "create", &g_values.pthread_enable,
     "Which pthread operations are recorded.",
     "`create` records thread creation, begin, end and join as OTF2 thread events, so every "
     "thread's location is tied to the thread that created it. `mutex` records "
     "`pthread_mutex_*` calls as regions plus OTF2 lock acquire/release events; `cond` "
     "records `pthread_cond_*` calls as regions plus the lock release and re-acquire that "
     "each wait implies.\n\n"
     "Wrapping mutexes and condition variables costs every lock operation of the program, "
     "those inside libraries included: `bench/run.sh` measured about 160-230 ns more per "
     "uncontended lock/unlock pair with `mutex` and tracing on, against 3-5 ns with the "
     "default (docs/PERFORMANCE.md). So `mutex` and `cond` are opt-in, e.g. "
     "`PROF_PTHREAD_ENABLE=default,mutex,cond` or `PROF_PTHREAD_ENABLE=all`.",
     kPthreadMembers},
    {"REUSE_AFTER", Type::Number, "16", &g_values.pthread_reuse_after,
     "Thread locations after which new threads take ended ones.",
     "Once the process has this many thread locations, a new thread takes the location of a "
     "thread that ended, if there is one, instead of a new one: its ThreadBegin and ThreadEnd "
     "follow the earlier thread's on that location, and the profile adds up their visits. "
     "Programs that start and end many short threads (one per task) then keep a bounded "
     "number of locations: their memory, the trace's readers (which need a buffer per "
     "location) and the profile's size stay in proportion to the threads alive at once, not "
     "to all threads ever started, and no event is lost for lack of memory (each location "
     "that writes a trace holds an OTF2 buffer of 4 MiB until the end). 0 reuses from "
     "the first ended thread on; the largest value, 4294967295, never reuses (one location "
     "per thread, as Score-P does by default).",
     nullptr, 0, 4294967295ull},
    {},
};

}  // namespace prof::config
