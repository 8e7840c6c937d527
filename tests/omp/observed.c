/* The known program that tests/omp/trace_omp_test.py traces and that the
   OMPT test tool (ompt_tool.c) watches: REGIONS parallel regions; in each,
   every thread passes an explicit barrier, then one thread (single nowait)
   creates TASKS tasks and two with dependences (out, then in, on one
   variable) and waits for them (taskwait), then a taskgroup of GROUP_TASKS
   tasks, and a taskloop (nogroup, 4 tasks) before the taskwait; a
   worksharing loop (static: GCC computes its bounds inline, without the
   runtime), a dynamic one, sections; the region's end. Prints
   "observed: ok" and the counts it expects the observers to see. */
#include <omp.h>
#include <stdio.h>

#include "omp_check.h"

#define REGIONS 3
#define TASKS 8
#define GROUP_TASKS 4
#define TASKLOOP_TASKS 4

static int done_tasks;
static int taskloop_iterations;

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

static void __attribute__((noinline)) make_taskloop(void) {
#pragma omp taskloop nogroup num_tasks(TASKLOOP_TASKS)
  for (int i = 0; i < 100; ++i) {
#pragma omp atomic
    taskloop_iterations++;
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
        make_taskloop();
#pragma omp taskwait
#pragma omp taskgroup
        make_tasks(GROUP_TASKS);
      }
#pragma omp for
      for (int i = 0; i < 100; ++i) sum += i;
#pragma omp for schedule(dynamic, 7)
      for (int i = 0; i < 100; ++i) sum += i;
#pragma omp sections
      {
#pragma omp section
        sum += 1;
#pragma omp section
        sum += 2;
      }
    }
  }
  CHECK(done_tasks == REGIONS * (TASKS + GROUP_TASKS + 1));
  CHECK(sum == REGIONS * (2 * 4950L + 3));
  CHECK(taskloop_iterations == REGIONS * 100);
  /* The work events: each thread's loops (the static one only through
     clang's libomp ABI), sections; two singles per region. */
#ifdef __clang__
  const int loops_per_thread = 2;
#else
  const int loops_per_thread = 1;
#endif
  printf("observed: ok threads=%d regions=%d tasks=%d deps_tasks=%d dependences=%d taskwaits=%d taskgroups=%d "
         "loops=%d sections=%d single_executor=%d single_other=%d taskloops=%d\n",
         threads, REGIONS, REGIONS * (TASKS + GROUP_TASKS + 2 + TASKLOOP_TASKS), REGIONS * 2, REGIONS * 2, REGIONS,
         REGIONS, REGIONS * threads * loops_per_thread, REGIONS * threads, REGIONS * 2, REGIONS * 2 * (threads - 1),
         REGIONS);
  return 0;
}
