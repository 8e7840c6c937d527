/* Doacross loops, loop cancellation (run with OMP_CANCELLATION=true),
   tasks created by every thread of a team, tasks in nested teams; on
   canopy's OpenMP runtime. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include "omp_check.h"
int main(void) {
  CHECK_CANOPY();
  /* doacross: a[i][j] depends on a[i-1][j] and a[i][j-1]; unsigned because
     the far corner's binomials overflow (wrapping is defined for unsigned) */
  static unsigned a[64][64];
  for (int nt = 1; nt <= 8; nt *= 2) {
#pragma omp parallel for ordered(2) num_threads(nt) schedule(dynamic)
    for (int i = 0; i < 64; ++i)
      for (int j = 0; j < 64; ++j) {
#pragma omp ordered depend(sink : i - 1, j) depend(sink : i, j - 1)
        a[i][j] = (i ? a[i - 1][j] : 0) + (j ? a[i][j - 1] : 0) + 1;
#pragma omp ordered depend(source)
      }
    /* a[i][j] = a[i-1][j] + a[i][j-1] + 1 = C(i+j+2, i+1) - 1 */
    CHECK(a[1][1] == 5u && a[2][2] == 19u && a[5][7] == 3002u && a[10][10] == 705431u);
  }
  /* cancellation (needs OMP_CANCELLATION=true) */
  int ran = 0;
#pragma omp parallel num_threads(4)
  {
#pragma omp for schedule(dynamic, 1)
    for (int i = 0; i < 100000; ++i) {
      if (i == 10) {
#pragma omp cancel for
      }
#pragma omp cancellation point for
#pragma omp atomic
      ran++;
    }
  }
  printf("cancel: ran %d of 100000 (cancellation %d)\n", ran, omp_get_cancellation());
  CHECK(omp_get_cancellation() && ran < 100000);
  /* tasks inside a parallel, all threads producing */
  long sum = 0;
#pragma omp parallel num_threads(8)
  {
    for (int i = 0; i < 200; ++i) {
#pragma omp task
      {
#pragma omp atomic
        sum += i;
      }
    }
#pragma omp barrier
#pragma omp single
    CHECK(sum == 8L * 199 * 200 / 2);
  }
  /* nested parallel with tasks */
  omp_set_max_active_levels(2);
  int cnt = 0;
#pragma omp parallel num_threads(2)
#pragma omp parallel num_threads(2)
#pragma omp single
  for (int i = 0; i < 50; ++i) {
#pragma omp task
    {
#pragma omp atomic
      cnt++;
    }
  }
  CHECK(cnt == 100); /* two inner teams, one single each */
  printf("x: ok\n");
  return 0;
}
