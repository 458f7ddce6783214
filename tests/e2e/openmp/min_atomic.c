// SPDX-License-Identifier: BSD-3-Clause
// An OpenMP program whose only calls into the OpenMP runtime are the GOMP_* entry points that
// libprof wraps (issue 30, item 8): with Debian's --as-needed, libgomp was dropped from the link
// and the first parallel region called a null function. Prints the team size it counted.
#include <stdio.h>

int main(void) {
  int n = 0;
#pragma omp parallel
  {
#pragma omp atomic
    n++;
  }
  printf("threads %d\n", n);
  return n > 0 ? 0 : 1;
}
