/* SPDX-License-Identifier: BSD-3-Clause */
/* Compiled with prof-wrap -c: linking it without prof-wrap must fail, naming prof-wrap. */
int main(void) { return 0; }
