/* Task reductions on canopy's OpenMP runtime (GCC 12 ABI): taskgroup
   task_reduction with in_reduction tasks (nested tasks included), a taskloop
   reduction, reduction(task, ...) on parallel and on a worksharing loop with
   in_reduction tasks, and sections / scope task reductions. Every sum is
   checked against its closed form. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "omp_check.h"

int main(void) {
  CHECK_CANOPY();
  const long n = 1000, want = n * (n - 1) / 2;
  for (int nt = 1; nt <= 8; nt *= 2) {
    /* taskgroup task_reduction, tasks (and their children) in_reduction */
    long s = 0, p = 1;
    double d = 0;
#pragma omp parallel num_threads(nt)
#pragma omp single
#pragma omp taskgroup task_reduction(+: s, d) task_reduction(*: p)
    for (long i = 0; i < n; ++i) {
      /* p in the outer task's in_reduction too: clang 14 passes a wrong
         address for an item a nested task reduces but its parent task only
         shares (libomp crashes as well). */
#pragma omp task in_reduction(+: s, d) in_reduction(*: p) firstprivate(i)
      {
        s += i;
        d += 0.5;
        if (i % 100 == 0) {
#pragma omp task in_reduction(+: s) in_reduction(*: p)
          { s += 1; p *= 2; }
        }
      }
    }
    CHECK(s == want + 10);
    CHECK(p == 1024);
    CHECK(d == n * 0.5);

    /* taskloop reduction */
    long t = 0;
#pragma omp parallel num_threads(nt)
#pragma omp single
#pragma omp taskloop reduction(+: t) grainsize(7)
    for (long i = 0; i < n; ++i) t += i;
    CHECK(t == want);

    /* reduction(task, ...) on parallel: every implicit task adds, tasks in_reduction */
    long u = 0;
#pragma omp parallel num_threads(nt) reduction(task, +: u)
    {
      u += 1;
#pragma omp single
      for (long i = 0; i < n; ++i) {
#pragma omp task in_reduction(+: u) firstprivate(i)
        u += i;
      }
    }
    CHECK(u == want + nt);

    /* reduction(task, ...) on a worksharing loop, sections and scope */
    long v = 0, w = 0, x = 0;
#pragma omp parallel num_threads(nt)
    {
#pragma omp for reduction(task, +: v) schedule(dynamic, 3)
      for (long i = 0; i < n; ++i) {
#pragma omp task in_reduction(+: v) firstprivate(i)
        v += i;
      }
#pragma omp sections reduction(task, +: w)
      {
#pragma omp section
        {
#pragma omp task in_reduction(+: w)
          w += 3;
        }
#pragma omp section
        w += 4;
      }
#ifndef __clang__ /* clang 14 has no scope construct (OpenMP 5.1) */
#pragma omp scope reduction(task, +: x)
      {
#pragma omp task in_reduction(+: x)
        x += 2;
      }
#else
#pragma omp atomic
      x += 2;
#endif
    }
    CHECK(v == want);
    CHECK(w == 7);
    CHECK(x == 2 * nt);
  }
  printf("task reductions ok\n");
  return 0;
}
