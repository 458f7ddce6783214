/* SPDX-License-Identifier: BSD-3-Clause */
/* dlopen A, call it, dlclose; dlopen B, which the loader usually maps where A was; call it.
 * B's calls must not be recorded under A's name. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static int call(const char* path, const char* sym, void** where) {
  void* h = dlopen(path, RTLD_NOW);
  if (!h) {
    fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
    exit(2);
  }
  int (*f)(int) = (int (*)(int))dlsym(h, sym);
  *where = (void*)f;
  int r = 0;
  for (int i = 0; i < 3; ++i) r += f(i);
  dlclose(h);
  return r;
}

int main(void) {
  void *a = 0, *b = 0;
  int r = 0;
  for (int round = 0; round < 2; ++round) {
    r += call(getenv("DL_A"), "dl_alpha", &a);
    r += call(getenv("DL_B"), "dl_beta", &b);
  }
  printf("r %d; dl_alpha at %p, dl_beta at %p (%s)\n", r, a, b, a == b ? "same address" : "different addresses");
  printf("PROF_EXPECT main 1\nPROF_EXPECT dl_alpha 6\nPROF_EXPECT dl_beta 6\n");
  return 0;
}
