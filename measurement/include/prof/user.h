/* SPDX-License-Identifier: BSD-3-Clause */
/* The prof user API: named regions and recording on/off. The macros expand to nothing unless
 * the file is compiled with `prof-wrap --user` (which defines PROF_USER_ENABLE), so
 * instrumented code also builds without prof.
 *
 *   PROF_USER_REGION_BEGIN(solve, "solve");   // declares a static handle named `solve`
 *   ...
 *   PROF_USER_REGION_END(solve);
 *
 *   void step() { PROF_USER_REGION("step"); ... }   // C++: ends at scope exit
 *
 *   PROF_RECORDING_OFF(); warmup(); PROF_RECORDING_ON();   // OTF2 MeasurementOnOff
 */
#ifndef PROF_USER_H
#define PROF_USER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A user region handle: 0 until the region is first entered, then its id + 1. */
typedef uint32_t prof_user_handle;

/** Enters the region `name` (defined on first use through *handle). Any thread; signal-unsafe;
 *  does nothing before measurement starts and after it ended. */
void prof_user_region_begin(prof_user_handle* handle, const char* name, const char* file, int line);
/** Leaves the region of *handle. An END without BEGIN is counted and reported once at the end. */
void prof_user_region_end(prof_user_handle* handle);
/** Switches recording of all threads off/on; writes OTF2 MeasurementOnOff. Any thread. */
void prof_recording_off(void);
void prof_recording_on(void);
/** 1 while recording, 0 when switched off. */
int prof_recording_is_on(void);

#ifdef __cplusplus
}
#endif

#ifdef PROF_USER_ENABLE

#define PROF_USER_REGION_BEGIN(handle, name)  \
  static prof_user_handle handle = 0;         \
  prof_user_region_begin(&handle, (name), __FILE__, __LINE__)
#define PROF_USER_REGION_END(handle) prof_user_region_end(&handle)
#define PROF_RECORDING_OFF() prof_recording_off()
#define PROF_RECORDING_ON() prof_recording_on()
#define PROF_RECORDING_IS_ON() prof_recording_is_on()

#ifdef __cplusplus
namespace prof {
/** RAII region for PROF_USER_REGION. */
class UserRegion {
 public:
  __attribute__((no_instrument_function)) UserRegion(prof_user_handle* h, const char* name, const char* file, int line)
      : h_(h) {
    prof_user_region_begin(h, name, file, line);
  }
  __attribute__((no_instrument_function)) ~UserRegion() { prof_user_region_end(h_); }
  UserRegion(const UserRegion&) = delete;
  UserRegion& operator=(const UserRegion&) = delete;

 private:
  prof_user_handle* h_;
};
}  // namespace prof
#define PROF_USER_CAT2_(a, b) a##b
#define PROF_USER_CAT_(a, b) PROF_USER_CAT2_(a, b)
#define PROF_USER_REGION(name)                                                  \
  static prof_user_handle PROF_USER_CAT_(prof_user_handle_, __LINE__) = 0;     \
  ::prof::UserRegion PROF_USER_CAT_(prof_user_region_, __LINE__)(               \
      &PROF_USER_CAT_(prof_user_handle_, __LINE__), (name), __FILE__, __LINE__)
#endif /* __cplusplus */

#else /* !PROF_USER_ENABLE */

#define PROF_USER_REGION_BEGIN(handle, name) ((void)0)
#define PROF_USER_REGION_END(handle) ((void)0)
#define PROF_RECORDING_OFF() ((void)0)
#define PROF_RECORDING_ON() ((void)0)
#define PROF_RECORDING_IS_ON() 1
#ifdef __cplusplus
#define PROF_USER_REGION(name) ((void)0)
#endif

#endif /* PROF_USER_ENABLE */

#endif /* PROF_USER_H */
