/* SPDX-License-Identifier: BSD-3-Clause */
/* The library half of the real-world build tests. */
#ifndef RW_FIB_H
#define RW_FIB_H
#ifdef __cplusplus
extern "C" {
#endif
int fib(int n);
#ifdef __cplusplus
}
#endif
#endif
