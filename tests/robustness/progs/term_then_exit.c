/* SPDX-License-Identifier: BSD-3-Clause */
/* Sends itself SIGTERM and returns from main at once: main's exit and prof's signal writer race to
 * the write-out (robustness/signals_stop.sh). The process must end by SIGTERM (status 143), as
 * it would without prof, whichever thread writes. */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

__attribute__((noinline)) static long leaf(long x) { return x * 3 + 1; }

int main(void) {
  long s = 0;
  for (long i = 0; i < 1000; ++i) s += leaf(i);
  printf("s %ld\n", s);
  fflush(stdout);
  kill(getpid(), SIGTERM);
  return 0;
}
