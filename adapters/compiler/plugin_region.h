/* SPDX-License-Identifier: BSD-3-Clause */
/* The region descriptor prof's GCC plugin (instrumenter/gcc-plugin) writes into every object,
 * one static per instrumented function, and the two hooks it calls with its address. The
 * plugin builds the same layout as a GCC tree type: change both together. */
#ifndef PROF_PLUGIN_REGION_H
#define PROF_PLUGIN_REGION_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct prof_plugin_region {
  uint32_t handle;      /* 0 until the runtime registers it, then its region id + 1 */
  int32_t line;         /* first line of the function, -1 if unknown */
  int32_t end_line;     /* last line, -1 if unknown */
  uint32_t flags;       /* 0 at start; the runtime sets bit 0 when the function is filtered or
                           throttled: the instrumented code then calls neither hook (it reads the
                           word once at entry, so the exit call matches the entry call) */
  const char* name;     /* demangled name, as prof's address path names it */
  const char* mangled;  /* assembler name */
  const char* file;     /* source file, absolute when the compiler knew the directory */
  void* fn;             /* the function's address */
};

void __prof_plugin_enter(struct prof_plugin_region* region);
void __prof_plugin_exit(struct prof_plugin_region* region);

#ifdef __cplusplus
}
#endif

#endif
