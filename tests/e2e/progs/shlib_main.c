/* SPDX-License-Identifier: BSD-3-Clause */
/* Calls into a linked shared library and into a dlopen'ed one (opened twice). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int lib_square(int x);
extern long n_lib_square;

int main(int argc, char** argv) {
  (void)argc;
  (void)argv;
  int r = 0;
  for (int i = 0; i < 7; ++i) r += lib_square(i);
  const char* path = getenv("DL_PATH");
  long cubes = 0;
  for (int round = 0; round < 2; ++round) {
    void* h = dlopen(path, RTLD_NOW);
    if (!h) {
      fprintf(stderr, "dlopen: %s\n", dlerror());
      return 2;
    }
    int (*cube)(int) = (int (*)(int))dlsym(h, "dl_cube");
    long* n = (long*)dlsym(h, "n_dl_cube");
    for (int i = 0; i < 5; ++i) r += cube(i);
    cubes += *n;
    dlclose(h);
  }
  printf("r %d\n", r);
  printf("PROF_EXPECT main 1\nPROF_EXPECT lib_square %ld\nPROF_EXPECT dl_cube %ld\n", n_lib_square, cubes);
  return 0;
}
