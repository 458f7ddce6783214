// SPDX-License-Identifier: BSD-3-Clause
// Attribute macros shared by the runtime: visibility, hot/cold paths, no instrumentation.
#pragma once

#define PROF_API __attribute__((visibility("default")))
/// On declarations of libprof's hot globals: -fvisibility=hidden leaves extern declarations
/// default, so without it every access in PIC code loads the address from the GOT first.
/// Only for what libprof's own objects (and static links of them) use.
#define PROF_HIDDEN __attribute__((visibility("hidden")))
#define PROF_NO_INSTRUMENT __attribute__((no_instrument_function))
#define PROF_COLD __attribute__((cold, noinline))
#define PROF_LIKELY(x) __builtin_expect(!!(x), 1)
#define PROF_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define PROF_INITIAL_EXEC __attribute__((tls_model("initial-exec")))
#define PROF_ALWAYS_INLINE __attribute__((always_inline))
