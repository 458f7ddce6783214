/* SPDX-License-Identifier: BSD-3-Clause */
/* Built without prof-wrap (prof_run.sh): main and two threads spend their time in libwork.so's
 * lib_work; with an argument, main then runs that command (a child process) and prints what
 * the child's environment says of prof. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

double lib_work(long n);

static void* thread_main(void* arg) {
  (void)arg;
  printf("thread %.0f\n", lib_work(40000000));
  return NULL;
}

int main(int argc, char** argv) {
  pthread_t t[2];
  for (int i = 0; i < 2; ++i) pthread_create(&t[i], NULL, thread_main, NULL);
  for (int i = 0; i < 2; ++i) pthread_join(t[i], NULL);
  printf("main %.0f\n", lib_work(40000000));
  fflush(stdout);
  if (argc > 1) return system(argv[1]) == 0 ? 0 : 1;
  return 0;
}
