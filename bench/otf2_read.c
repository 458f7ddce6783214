/* SPDX-License-Identifier: BSD-3-Clause */
/* The OTF2 library alone reading a trace: the floor for prof-export's conversion rate.
 *
 *   otf2_read ANCHOR
 *
 * Reads the global definitions, every location's local definitions and all events through the
 * global (time-merged) event reader, as prof-export does, with Enter/Leave callbacks that only
 * count; prints "events=<n> read_ns=<ns> events_per_s=<x>". */
#define _GNU_SOURCE
#include <otf2/otf2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long ns_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static OTF2_LocationRef* g_locations;
static size_t g_count;

static OTF2_CallbackCode on_location(void* data, OTF2_LocationRef self, OTF2_StringRef name, OTF2_LocationType type,
                                     uint64_t events, OTF2_LocationGroupRef group) {
  (void)name, (void)type, (void)events, (void)group;
  OTF2_Reader_SelectLocation((OTF2_Reader*)data, self);
  OTF2_LocationRef* grown = realloc(g_locations, (g_count + 1) * sizeof *grown);
  if (!grown) return OTF2_CALLBACK_INTERRUPT;
  g_locations = grown;
  g_locations[g_count++] = self;
  return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_region_event(OTF2_LocationRef loc, OTF2_TimeStamp t, void* data, OTF2_AttributeList* a,
                                         OTF2_RegionRef region) {
  (void)loc, (void)t, (void)a, (void)region;
  ++*(uint64_t*)data;
  return OTF2_CALLBACK_SUCCESS;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: otf2_read ANCHOR\n");
    return 2;
  }
  const long long t0 = ns_now();
  OTF2_Reader* r = OTF2_Reader_Open(argv[1]);
  if (!r) return 1;
  OTF2_Reader_SetSerialCollectiveCallbacks(r);
  OTF2_GlobalDefReader* gdr = OTF2_Reader_GetGlobalDefReader(r);
  OTF2_GlobalDefReaderCallbacks* dcb = OTF2_GlobalDefReaderCallbacks_New();
  OTF2_GlobalDefReaderCallbacks_SetLocationCallback(dcb, on_location);
  OTF2_Reader_RegisterGlobalDefCallbacks(r, gdr, dcb, r);
  OTF2_GlobalDefReaderCallbacks_Delete(dcb);
  uint64_t n = 0;
  OTF2_Reader_ReadAllGlobalDefinitions(r, gdr, &n);
  OTF2_Reader_OpenDefFiles(r);
  OTF2_Reader_OpenEvtFiles(r);
  for (size_t i = 0; i < g_count; ++i) {
    /* Local definitions (mapping tables, clock offsets) as prof-export reads them. */
    OTF2_DefReader* dr = OTF2_Reader_GetDefReader(r, g_locations[i]);
    if (dr) {
      uint64_t k = 0;
      OTF2_Reader_ReadAllLocalDefinitions(r, dr, &k);
      OTF2_Reader_CloseDefReader(r, dr);
    }
    OTF2_Reader_GetEvtReader(r, g_locations[i]);
  }
  OTF2_Reader_CloseDefFiles(r);
  OTF2_GlobalEvtReader* ger = OTF2_Reader_GetGlobalEvtReader(r);
  OTF2_GlobalEvtReaderCallbacks* cb = OTF2_GlobalEvtReaderCallbacks_New();
  OTF2_GlobalEvtReaderCallbacks_SetEnterCallback(cb, on_region_event);
  OTF2_GlobalEvtReaderCallbacks_SetLeaveCallback(cb, on_region_event);
  uint64_t events = 0;
  OTF2_Reader_RegisterGlobalEvtCallbacks(r, ger, cb, &events);
  OTF2_GlobalEvtReaderCallbacks_Delete(cb);
  uint64_t read = 0;
  OTF2_ErrorCode rc = OTF2_Reader_ReadAllGlobalEvents(r, ger, &read);
  OTF2_Reader_Close(r);
  const long long dt = ns_now() - t0;
  if (rc != OTF2_SUCCESS) {
    fprintf(stderr, "otf2_read: %s\n", OTF2_Error_GetDescription(rc));
    return 1;
  }
  printf("events=%llu read_ns=%lld events_per_s=%.0f\n", (unsigned long long)events, dt, events * 1e9 / (double)dt);
  free(g_locations);
  return 0;
}
