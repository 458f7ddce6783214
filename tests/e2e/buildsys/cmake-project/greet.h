/* SPDX-License-Identifier: BSD-3-Clause */
/* The library half of the build-system test project. */
#ifndef GREET_H
#define GREET_H
int greet_sum(int n);
#endif
