/* bench/omp/task_loops.c: the three task shapes of epcc.c whose 2-thread
 * cost depends most on what the creating and the running thread share
 * (task_loops.py runs them, compiled by clang, on libomp and canopy):
 *   master    one thread creates every task, any thread runs them
 *             (epcc's task-master);
 *   taskwait  every thread creates a task and waits for it (epcc's taskwait);
 *   depend    one thread creates chains of inout tasks, one chain per
 *             thread (epcc's task-depend).
 * Each task spins `delay` iterations (default 30, about 0.1 us).
 *
 *   task_loops SHAPE TASKS [RUNS [DELAY]]
 *
 * prints `SHAPE NS by1=F`: the fastest of RUNS runs (after one warm-up of
 * TASKS/10), in ns per task, and for `master` the share of the tasks that
 * thread 1 ran (0 for the others). Exits 1 if a task is lost. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile long sink;
static long counter, by1;
static int delay = 30;
static long chains[64 * 8]; /* one dependence object per chain, a cache line apart */

static void spin(int n) {
  for (int i = 0; i < n; ++i) sink = i;
}

static void master(long n) {
#pragma omp parallel
#pragma omp master
  for (long r = 0; r < n; ++r) {
#pragma omp task
    {
      spin(delay);
      if (omp_get_thread_num() == 1) {
#pragma omp atomic
        by1++;
      }
#pragma omp atomic
      counter++;
    }
  }
}

static void taskwait(long n) {
  const int p = omp_get_max_threads();
#pragma omp parallel
  for (long r = 0; r < n / p; ++r) {
#pragma omp task
    {
      spin(delay);
#pragma omp atomic
      counter++;
    }
#pragma omp taskwait
  }
}

static void depend(long n) {
  const int p = omp_get_max_threads() < 64 ? omp_get_max_threads() : 64;
#pragma omp parallel
#pragma omp single
  for (long r = 0; r < n; ++r) {
    long* obj = &chains[(r % p) * 8];
#pragma omp task depend(inout : obj[0]) firstprivate(obj)
    {
      spin(delay);
      obj[0]++;
#pragma omp atomic
      counter++;
    }
  }
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: task_loops master|taskwait|depend TASKS [RUNS [DELAY]]\n");
    return 2;
  }
  const char* shape = argv[1];
  void (*run)(long) = !strcmp(shape, "master") ? master : !strcmp(shape, "taskwait") ? taskwait
                      : !strcmp(shape, "depend") ? depend : NULL;
  const long n = atol(argv[2]);
  const int runs = argc > 3 ? atoi(argv[3]) : 1;
  if (argc > 4) delay = atoi(argv[4]);
  if (!run || n <= 0 || runs <= 0) {
    fprintf(stderr, "task_loops: bad arguments (shape '%s', tasks '%s')\n", shape, argv[2]);
    return 2;
  }
  const int p = omp_get_max_threads();
  const long per_run = run == taskwait ? n / p * p : n;
  run(n / 10);
  double best = 1e30;
  long ran = 0;
  for (int i = 0; i < runs; ++i) {
    counter = by1 = 0;
    const double t0 = omp_get_wtime();
    run(n);
    const double t = (omp_get_wtime() - t0) / (double)n * 1e9;
    if (counter != per_run) {
      fprintf(stderr, "task_loops: %s: %ld of %ld tasks ran\n", shape, counter, per_run);
      return 1;
    }
    if (t < best) {
      best = t;
      ran = by1;
    }
  }
  printf("%s %.1f by1=%.2f\n", shape, best, (double)ran / (double)per_run);
  return 0;
}
