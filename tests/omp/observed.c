/* The known program that tests/omp/trace_omp_test.py traces and that the
   OMPT test tool (ompt_tool.c) watches: REGIONS parallel regions; in each,
   every thread passes an explicit barrier, then one thread (single nowait)
   creates TASKS tasks and two with dependences (out, then in, on one
   variable) and waits for them (taskwait), then a taskgroup of GROUP_TASKS
   tasks; a worksharing loop; the region's end. Prints
   "observed: ok" and the counts it expects the observers to see. */
#include <omp.h>
#include <stdio.h>

#include "omp_check.h"

#define REGIONS 3
#define TASKS 8
#define GROUP_TASKS 4

static int done_tasks;

/* A named function creating the tasks: GCC names their outlined functions
   after it (make_tasks._omp_fn.N), which the trace shows as labels. */
static void __attribute__((noinline)) make_tasks(int n) {
  for (int i = 0; i < n; ++i) {
#pragma omp task
    {
#pragma omp atomic
      done_tasks++;
    }
  }
}

static void __attribute__((noinline)) make_dep_tasks(int* x) {
#pragma omp task depend(out : x[0])
  x[0] = 1;
#pragma omp task depend(in : x[0])
  {
#pragma omp atomic
    done_tasks += x[0];
  }
}

int main(void) {
  CHECK_CANOPY();
  int threads = 0;
  long sum = 0;
  for (int r = 0; r < REGIONS; ++r) {
#pragma omp parallel reduction(+ : sum)
    {
#pragma omp single nowait
      threads = omp_get_num_threads();
#pragma omp barrier
#pragma omp single nowait
      {
        int x = 0;
        make_tasks(TASKS);
        make_dep_tasks(&x);
#pragma omp taskwait
#pragma omp taskgroup
        make_tasks(GROUP_TASKS);
      }
#pragma omp for
      for (int i = 0; i < 100; ++i) sum += i;
    }
  }
  CHECK(done_tasks == REGIONS * (TASKS + GROUP_TASKS + 1));
  CHECK(sum == REGIONS * 4950L);
  printf("observed: ok threads=%d regions=%d tasks=%d deps_tasks=%d dependences=%d taskwaits=%d taskgroups=%d\n",
         threads, REGIONS, REGIONS * (TASKS + GROUP_TASKS + 2), REGIONS * 2, REGIONS * 2, REGIONS, REGIONS);
  return 0;
}
