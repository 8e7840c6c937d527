/* EPCC-style synchronisation overheads: the time per `barrier`, per
   `parallel` region and per `for` (static, implicit barrier), minus the
   same delay run without the construct, in microseconds. Built by GCC
   against libgomp; run on any runtime by LD_LIBRARY_PATH.
   Usage: epcc THREADS [INNER_REPS] -> one line "barrier X parallel Y for Z". */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static volatile int sink;
static void delay(int n) {
  for (int i = 0; i < n; ++i) sink = i;
}

int main(int argc, char** argv) {
  int nt = argc > 1 ? atoi(argv[1]) : 2;
  int reps = argc > 2 ? atoi(argv[2]) : 2000;
  const int d = 50;
  omp_set_num_threads(nt);
#pragma omp parallel
  delay(d); /* warm up the pool */
  double t0 = omp_get_wtime();
  for (int r = 0; r < reps; ++r) delay(d);
  double ref = omp_get_wtime() - t0;

  t0 = omp_get_wtime();
#pragma omp parallel
  for (int r = 0; r < reps; ++r) {
    delay(d);
#pragma omp barrier
  }
  double bar = omp_get_wtime() - t0;

  t0 = omp_get_wtime();
  for (int r = 0; r < reps; ++r) {
#pragma omp parallel
    delay(d);
  }
  double par = omp_get_wtime() - t0;

  t0 = omp_get_wtime();
#pragma omp parallel
  for (int r = 0; r < reps; ++r) {
#pragma omp for schedule(static)
    for (int i = 0; i < nt; ++i) delay(d);
  }
  double fr = omp_get_wtime() - t0;
  printf("barrier %.3f parallel %.3f for %.3f\n", (bar - ref) / reps * 1e6, (par - ref) / reps * 1e6,
         (fr - ref) / reps * 1e6);
  return 0;
}
