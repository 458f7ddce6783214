/* SPDX-License-Identifier: BSD-3-Clause */
/* A small threaded Jacobi solver: the bundled example of the README's quick start.
 * Each of T threads relaxes a band of rows of an N x N grid; a barrier built from a mutex and
 * a condition variable separates the sweeps. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

enum { N = 256, SWEEPS = 60, THREADS = 4 };

static double grid[2][N][N];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn = PTHREAD_COND_INITIALIZER;
static int arrived, generation;
static double residual;

static void barrier(void) {
  pthread_mutex_lock(&lock);
  int gen = generation;
  if (++arrived == THREADS) {
    arrived = 0;
    generation++;
    pthread_cond_broadcast(&turn);
  } else {
    while (gen == generation) pthread_cond_wait(&turn, &lock);
  }
  pthread_mutex_unlock(&lock);
}

static double relax_row(const double (*in)[N], double (*out)[N], int i) {
  double r = 0;
  for (int j = 1; j < N - 1; ++j) {
    out[i][j] = 0.25 * (in[i - 1][j] + in[i + 1][j] + in[i][j - 1] + in[i][j + 1]);
    double d = out[i][j] - in[i][j];
    r += d * d;
  }
  return r;
}

static double sweep(int sweep_no, int first, int last) {
  const double(*in)[N] = grid[sweep_no % 2];
  double(*out)[N] = grid[(sweep_no + 1) % 2];
  double r = 0;
  for (int i = first; i < last; ++i) r += relax_row(in, out, i);
  return r;
}

static void* worker(void* arg) {
  long t = (long)arg;
  int rows = (N - 2) / THREADS;
  int first = 1 + (int)t * rows, last = t == THREADS - 1 ? N - 1 : first + rows;
  for (int s = 0; s < SWEEPS; ++s) {
    double r = sweep(s, first, last);
    pthread_mutex_lock(&lock);
    residual += r;
    pthread_mutex_unlock(&lock);
    barrier();
  }
  return NULL;
}

static void init_grid(void) {
  for (int k = 0; k < 2; ++k)
    for (int i = 0; i < N; ++i) grid[k][i][0] = grid[k][i][N - 1] = 100.0;
}

int main(void) {
  pthread_t tid[THREADS];
  init_grid();
  for (long t = 0; t < THREADS; ++t) pthread_create(&tid[t], NULL, worker, (void*)t);
  for (int t = 0; t < THREADS; ++t) pthread_join(tid[t], NULL);
  printf("jacobi: %d sweeps on %dx%d with %d threads, accumulated residual %.3f\n", SWEEPS, N, N, THREADS, residual);
  return 0;
}
