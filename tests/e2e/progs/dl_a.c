/* SPDX-License-Identifier: BSD-3-Clause */
/* One of two libraries dlopen'ed in turn at (usually) the same address. */
int dl_alpha(int x) { return x + 1; }
