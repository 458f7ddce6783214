/* SPDX-License-Identifier: BSD-3-Clause */
/* exit() while three other threads are busy calling instrumented functions: recording stops
 * everywhere first; their buffers are read only up to what they committed. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile long sink;

__attribute__((noinline)) static long leaf(long x) { return x * 3 + 1; }

__attribute__((noinline)) static long inner(long x) { return leaf(x) + leaf(x + 1); }

static int started; /* threads that made their first call */

static void* spinner(void* arg) {
  long s = (long)arg;
  sink = inner(s++);
  __atomic_fetch_add(&started, 1, __ATOMIC_RELEASE);
  for (;;) sink = inner(s++);
  return NULL;
}

int main(void) {
  pthread_t t[3];
  for (long i = 0; i < 3; ++i) pthread_create(&t[i], NULL, spinner, (void*)i);
  /* Every thread runs (and so has a location with events) before the exit: on a loaded machine
   * a thread could otherwise start only after it, with nothing recorded. */
  struct timespec ms = {0, 1000 * 1000};
  while (__atomic_load_n(&started, __ATOMIC_ACQUIRE) < 3) nanosleep(&ms, NULL);
  struct timespec ts = {0, 20 * 1000 * 1000};
  nanosleep(&ts, NULL);
  printf("exiting while the threads run\n");
  fflush(stdout);
  exit(7);
}
