/* SPDX-License-Identifier: BSD-3-Clause */
/* The OTF2 library alone, the reference for prof's trace write-out in bench/run.sh.
 *
 *   otf2_raw EVENTS DIR [bounded|default]
 *
 * Writes EVENTS events (alternating Enter/Leave of one region, one location) into a new
 * archive DIR/traces.otf2, with the definitions a reader needs, and prints
 * "events=<n> write_ns=<ns> events_per_s=<x>"; the time is from OTF2_Archive_Open to
 * OTF2_Archive_Close (everything prof does at its end, minus prof's own records).
 *
 * bounded (the default): OTF2 set up as prof sets it up (otf2-writer/trace_writer.cpp):
 *   4 MiB event chunks, one chunk per event writer (a full chunk is written to the file
 *   before the next one is handed out), no post-flush callback, no compression.
 * default: OTF2's own memory management (malloc, no callbacks), 1 MiB event chunks.
 *
 * The events' region is region 1 of two ("main" 0, "tiny" 1), as in any trace of more than one
 * region: OTF2 writes a region reference in its compressed form, where 0 (and UINT32_MAX) take one
 * byte on a shortcut path and every other value a length byte and the value's bytes. Until
 * 2026-11-27 this program wrote region 0, so its events were one byte shorter and cheaper to
 * encode than those of any real trace, prof's included (its hot region here is region 15). */
#define _GNU_SOURCE
#include <otf2/otf2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long long ns_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static OTF2_FlushType pre_flush(void* data, OTF2_FileType type, OTF2_LocationRef loc, void* cb, bool final) {
  (void)data, (void)type, (void)loc, (void)cb, (void)final;
  return OTF2_FLUSH;
}

/* Per-buffer memory: at most one event chunk; definition chunks are a plain list. */
struct Alloc {
  struct Alloc* next;
};
struct BufferMemory {
  void* event_block;
  struct Alloc* heap;
};

static void* allocate(void* data, OTF2_FileType type, OTF2_LocationRef loc, void** per_buffer, uint64_t size) {
  (void)data, (void)loc;
  struct BufferMemory* mem = *per_buffer;
  if (!mem) *per_buffer = mem = calloc(1, sizeof *mem);
  if (!mem) return NULL;
  if (type == OTF2_FILETYPE_EVENTS) {
    if (mem->event_block) return NULL; /* OTF2 writes the full chunk out and asks again */
    mem->event_block = malloc(size);
    return mem->event_block;
  }
  struct Alloc* a = malloc(16 + size);
  if (!a) return NULL;
  a->next = mem->heap;
  mem->heap = a;
  return (char*)a + 16; /* the link lives in front of the chunk; 16 keeps malloc's alignment */
}

static void free_all(void* data, OTF2_FileType type, OTF2_LocationRef loc, void** per_buffer, bool final) {
  (void)data, (void)type, (void)loc;
  struct BufferMemory* mem = *per_buffer;
  if (!mem) return;
  free(mem->event_block);
  mem->event_block = NULL;
  while (mem->heap) {
    struct Alloc* n = mem->heap->next;
    free(mem->heap);
    mem->heap = n;
  }
  if (final) {
    free(mem);
    *per_buffer = NULL;
  }
}

static int check(OTF2_ErrorCode rc, const char* what) {
  if (rc == OTF2_SUCCESS) return 0;
  fprintf(stderr, "otf2_raw: %s failed: %s\n", what, OTF2_Error_GetDescription(rc));
  return 1;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s EVENTS DIR [bounded|default]\n", argv[0]);
    return 2;
  }
  long long events = atoll(argv[1]);
  const char* dir = argv[2];
  int bounded = argc < 4 || strcmp(argv[3], "default") != 0;
  if (events <= 0) {
    fprintf(stderr, "otf2_raw: EVENTS must be positive\n");
    return 2;
  }
  static const OTF2_FlushCallbacks flush_cbs = {&pre_flush, NULL};
  static const OTF2_MemoryCallbacks mem_cbs = {&allocate, &free_all};

  long long t0 = ns_now();
  OTF2_Archive* archive = OTF2_Archive_Open(dir, "traces", OTF2_FILEMODE_WRITE,
                                            bounded ? 4 * 1024 * 1024 : 1024 * 1024, 4 * 1024 * 1024,
                                            OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  if (!archive) {
    fprintf(stderr, "otf2_raw: cannot create an archive in '%s'\n", dir);
    return 1;
  }
  OTF2_Archive_SetFlushCallbacks(archive, &flush_cbs, NULL);
  if (bounded) OTF2_Archive_SetMemoryCallbacks(archive, &mem_cbs, NULL);
  OTF2_Archive_SetSerialCollectiveCallbacks(archive);
  OTF2_Archive_SetCreator(archive, "prof bench/otf2_raw");
  if (check(OTF2_Archive_OpenEvtFiles(archive), "OTF2_Archive_OpenEvtFiles")) return 1;

  OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(archive, 0);
  if (!w) {
    fprintf(stderr, "otf2_raw: no event writer\n");
    return 1;
  }
  OTF2_TimeStamp t = 1000;
  for (long long i = 0; i < events; i += 2) {
    if (check(OTF2_EvtWriter_Enter(w, NULL, t, 1), "OTF2_EvtWriter_Enter")) return 1;
    t += 7;
    if (i + 1 < events && check(OTF2_EvtWriter_Leave(w, NULL, t, 1), "OTF2_EvtWriter_Leave")) return 1;
    t += 5;
  }
  uint64_t written = 0;
  OTF2_EvtWriter_GetNumberOfEvents(w, &written);
  OTF2_Archive_CloseEvtWriter(archive, w);
  OTF2_Archive_CloseEvtFiles(archive);

  OTF2_Archive_OpenDefFiles(archive);
  OTF2_DefWriter* dw = OTF2_Archive_GetDefWriter(archive, 0);
  if (dw) {
    OTF2_DefWriter_WriteClockOffset(dw, 1000, 0, 0.0);
    OTF2_DefWriter_WriteClockOffset(dw, t, 0, 0.0);
    OTF2_Archive_CloseDefWriter(archive, dw);
  }
  OTF2_Archive_CloseDefFiles(archive);

  OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(archive);
  if (!g) {
    fprintf(stderr, "otf2_raw: no global definition writer\n");
    return 1;
  }
  OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000, 1000, t - 1000, 0);
  const char* strings[] = {"", "machine", "Linux", "node", "localhost", "Process", "Master thread", "tiny", "main"};
  for (uint32_t i = 0; i < sizeof strings / sizeof strings[0]; ++i) OTF2_GlobalDefWriter_WriteString(g, i, strings[i]);
  OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, 2, 1, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
  OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 1, 4, 3, 0);
  OTF2_GlobalDefWriter_WriteLocationGroup(g, 0, 5, OTF2_LOCATION_GROUP_TYPE_PROCESS, 1, OTF2_UNDEFINED_LOCATION_GROUP);
  OTF2_GlobalDefWriter_WriteLocation(g, 0, 6, OTF2_LOCATION_TYPE_CPU_THREAD, written, 0);
  OTF2_GlobalDefWriter_WriteRegion(g, 0, 8, 8, 0, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_COMPILER,
                                   OTF2_REGION_FLAG_NONE, 0, 0, 0);
  OTF2_GlobalDefWriter_WriteRegion(g, 1, 7, 7, 0, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_COMPILER,
                                   OTF2_REGION_FLAG_NONE, 0, 0, 0);
  OTF2_Archive_CloseGlobalDefWriter(archive, g);
  if (check(OTF2_Archive_Close(archive), "OTF2_Archive_Close")) return 1;
  long long t1 = ns_now();

  double secs = (double)(t1 - t0) / 1e9;
  printf("events=%llu write_ns=%lld events_per_s=%.0f mode=%s\n", (unsigned long long)written, t1 - t0,
         secs > 0 ? (double)written / secs : 0.0, bounded ? "bounded" : "default");
  return written == (uint64_t)events ? 0 : 1;
}
