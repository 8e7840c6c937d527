/* Tasks on canopy's OpenMP runtime: deferred tasks, taskwait, taskgroup,
   depend (in/out chains must run in order), taskloop, final. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "omp_check.h"

static long fib(int n) {
  if (n < 2) return n;
  long a, b;
#pragma omp task shared(a)
  a = fib(n - 1);
#pragma omp task shared(b)
  b = fib(n - 2);
#pragma omp taskwait
  return a + b;
}

int main(void) {
  CHECK_CANOPY();
  for (int nt = 1; nt <= 8; nt *= 2) {
    /* CANOPY_OMP_TEST_SMALL: a smaller tree (the ThreadSanitizer run) */
    const int small = getenv("CANOPY_OMP_TEST_SMALL") != NULL;
    long f = 0;
#pragma omp parallel num_threads(nt)
#pragma omp single
    f = fib(small ? 12 : 20);
    CHECK(f == (small ? 144 : 6765));

    int count = 0;
#pragma omp parallel num_threads(nt)
    {
#pragma omp single
      {
#pragma omp taskgroup
        for (int i = 0; i < 500; ++i) {
#pragma omp task
          {
#pragma omp atomic
            count++;
          }
        }
        CHECK(count == 500);
      }
    }

    /* a chain through one variable: out, in, in, out, ... must be ordered */
    int x = 0, log[64], pos = 0;
#pragma omp parallel num_threads(nt)
#pragma omp single
    {
      for (int i = 0; i < 16; ++i) {
#pragma omp task depend(inout : x) shared(x, log, pos)
        {
          x++;
          int p;
#pragma omp atomic capture
          p = pos++;
          log[p] = x;
        }
#pragma omp task depend(in : x) shared(x)
        CHECK(x == i + 1);
      }
#pragma omp taskwait
    }
    CHECK(x == 16);
    for (int i = 0; i < 16; ++i) CHECK(log[i] == i + 1);

    /* A detached task's dependents wait for its event, in a team of one too
       (where the dependences of tasks that run at once need no tracking). */
    int dx = 0, seen = -1, after = -1;
    omp_event_handle_t ev;
#pragma omp parallel num_threads(nt) shared(dx, seen, after, ev)
#pragma omp single
    {
#pragma omp task depend(out : dx) shared(dx)
      dx = 1;
#pragma omp task detach(ev) depend(inout : dx) shared(dx)
      dx = 2;
#pragma omp task shared(ev)
      omp_fulfill_event(ev);
#pragma omp task depend(in : dx) shared(dx, seen)
      seen = dx;
#pragma omp task depend(out : dx) shared(dx, after)
      {
        after = dx;
        dx = 3;
      }
#pragma omp taskwait
    }
    CHECK(seen == 2 && after == 2 && dx == 3);

    int hits[1000] = {0};
#pragma omp parallel num_threads(nt)
#pragma omp single
#pragma omp taskloop grainsize(7)
    for (int i = 0; i < 1000; ++i) hits[i]++;
    for (int i = 0; i < 1000; ++i) CHECK(hits[i] == 1);

    int in_final = 0;
#pragma omp parallel num_threads(nt)
#pragma omp single
#pragma omp task final(1) shared(in_final)
    {
#pragma omp task shared(in_final)
      in_final = omp_in_final();
    }
    CHECK(in_final == 1);
  }
  printf("tasks: ok\n");
  return 0;
}
