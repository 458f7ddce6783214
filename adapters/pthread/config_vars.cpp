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

// The default leaves mutex and cond off: they add a hook to every lock operation of the
// program. The bench figure that quantifies this is to be added to the long help.
const Var kPthreadVars[] = {
    {"ENABLE", Type::Set, "create", &g_values.pthread_enable,
     "Which pthread operations are recorded.",
     "`create` records thread creation, begin, end and join as OTF2 thread events, so every "
     "thread's location is tied to the thread that created it. `mutex` records "
     "`pthread_mutex_*` calls as regions plus OTF2 lock acquire/release events; `cond` "
     "records `pthread_cond_*` calls as regions plus the lock release and re-acquire that "
     "each wait implies.\n\n"
     "Wrapping mutexes and condition variables costs a hook on every lock operation of the "
     "program, so `mutex` and `cond` are opt-in, e.g. `PROF_PTHREAD_ENABLE=default,mutex,cond` "
     "or `PROF_PTHREAD_ENABLE=all`.",
     kPthreadMembers},
    {},
};

}  // namespace prof::config
