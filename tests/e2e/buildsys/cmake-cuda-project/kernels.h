// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Host functions of kernels.cu: each runs one kernel when a GPU is there, the same arithmetic on
// the CPU otherwise, so the program's host call counts are the same with and without a GPU.
int scale_on_device(int n);
bool have_gpu();
