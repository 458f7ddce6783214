/* SPDX-License-Identifier: BSD-3-Clause */
/* The library half of the build-system test project. */
#ifndef GREET_H
#define GREET_H
#ifdef __cplusplus
extern "C" {
#endif
int greet_sum(int n);
#ifdef __cplusplus
}
#endif
#endif
