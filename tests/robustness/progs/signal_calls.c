// SPDX-License-Identifier: BSD-3-Clause
// A SIGALRM handler that calls instrumented functions, 2,000 times, while the main thread calls a
// filtered function without pause: most signals land inside prof's hooks (a filtered function
// still runs them). Prints how many times the handler ran.
// Arguments (optional): how many times the handler runs (2,000), how many calls of in_handler
// each run makes (1), the timer's period in microseconds (200).
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

static volatile sig_atomic_t handled;
static volatile unsigned long sink;
static int calls = 1;

__attribute__((noinline)) void in_handler(int i) { sink += (unsigned long)i; }
__attribute__((noinline)) void work(int i) { sink ^= (unsigned long)i; }

static void on_alarm(int sig) {
  (void)sig;
  for (int c = 0; c < calls; ++c) in_handler(handled);
  handled = handled + 1;
}

int main(int argc, char** argv) {
  const int want = argc > 1 ? atoi(argv[1]) : 2000;
  if (argc > 2) calls = atoi(argv[2]);
  const int period = argc > 3 ? atoi(argv[3]) : 200;
  struct sigaction sa = {0};
  sa.sa_handler = on_alarm;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGALRM, &sa, NULL);
  struct itimerval it = {{0, period}, {0, period}};
  setitimer(ITIMER_REAL, &it, NULL);
  while (handled < want)
    for (int i = 0; i < 100; ++i) work(i);
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  printf("handled %d\n", (int)handled);
  return 0;
}
