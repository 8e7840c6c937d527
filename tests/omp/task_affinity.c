/* Task affinity on a pretend machine of 4 NUMA nodes (CANOPY_OMP_TEST_NUMA=4:
   thread t of the team on node t mod 4, page p on node p mod 4): the
   affinity clause (clang; GCC drops it), canopy_omp_task_node and
   canopy_omp_task_thread (both compilers). Run with CANOPY_OMP_AFFINITY
   strict (every task on its node / thread) and loose (the default: on its
   node unless other nodes' threads were idle; tasks all aimed at one node
   spread). OMP_NUM_THREADS=8: two threads per node. */
#include <omp.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "canopy_omp.h"
#include "omp_check.h"

enum { NODES = 4, PAGES = 64, TASKS_PER_PAGE = 4 };

static int node_of_thread(int t) { return t % NODES; }
static int node_of_address(const void* p, long ps) { return (int)(((uintptr_t)p / (uintptr_t)ps) % NODES); }
static void work(double us) {
  const double end = omp_get_wtime() + us * 1e-6;
  while (omp_get_wtime() < end) {
  }
}

int main(void) {
  CHECK_CANOPY();
  const char* mode = getenv("CANOPY_OMP_AFFINITY");
  const int strict = mode && strcmp(mode, "strict") == 0;
  const long ps = sysconf(_SC_PAGESIZE);
  char* a = aligned_alloc((size_t)ps, (size_t)ps * PAGES);
  memset(a, 1, (size_t)ps * PAGES);
  CHECK(omp_get_max_threads() == 2 * NODES);

  int on_node = 0, total = 0;
#ifdef __clang__
  /* The clause: each task's data is one page (and a pair of ranges weighed by bytes). */
  int ran[PAGES * TASKS_PER_PAGE];
#pragma omp parallel
#pragma omp single
  for (int k = 0; k < PAGES * TASKS_PER_PAGE; ++k) {
    char* page = a + (k % PAGES) * ps;
#pragma omp task affinity(page[0 : ps]) firstprivate(k)
    {
      ran[k] = omp_get_thread_num();
      work(20);
    }
  }
  for (int k = 0; k < PAGES * TASKS_PER_PAGE; ++k) {
    const int want = node_of_address(a + (k % PAGES) * ps, ps);
    on_node += node_of_thread(ran[k]) == want;
    ++total;
  }
  int weighed = -1;
  char* p0 = a + 8 * ps;
#pragma omp parallel
#pragma omp single
  {
    /* 100 bytes on page 8's node, 3000 bytes on page 9's: page 9's node wins. */
#pragma omp task affinity(p0[0 : 100], p0[ps : 3000])
    weighed = omp_get_thread_num();
  }
  CHECK(node_of_thread(weighed) == node_of_address(p0 + ps, ps) || !strict);
  if (strict) CHECK(on_node == total);
  else CHECK(on_node * 3 >= total); /* loose: more than without affinity (1 in 4), however loaded the machine */
  printf("affinity clause: %d of %d tasks on their data's node (%s)\n", on_node, total, strict ? "strict" : "loose");
#endif

  /* canopy_omp_task_node: every task for node 2; canopy_omp_task_thread: thread 5.
     Loose: the other nodes' threads, idle, take some of node 2's tasks once
     they have waited long enough; on a loaded machine they may not get a
     CPU in time, so up to 5 rounds, one of which must show it. */
  int node2 = 0, elsewhere = 0;
  for (int round = 0; round < (strict ? 1 : 5); ++round) {
    int node_ran[64], thread_ran[16];
#pragma omp parallel
#pragma omp single
    {
      for (int k = 0; k < 64; ++k) {
        CHECK(canopy_omp_task_node(2) == 1);
#pragma omp task firstprivate(k)
        {
          node_ran[k] = omp_get_thread_num();
          work(200);
        }
      }
      for (int k = 0; k < 16; ++k) {
        canopy_omp_task_thread(5);
#pragma omp task firstprivate(k)
        thread_ran[k] = omp_get_thread_num();
      }
      /* Taken by the next task only: this one has no affinity. */
#pragma omp task
      work(1);
    }
    node2 = elsewhere = 0;
    for (int k = 0; k < 64; ++k) {
      if (node_of_thread(node_ran[k]) == 2) ++node2;
      else ++elsewhere;
    }
    for (int k = 0; k < 16; ++k)
      if (strict) CHECK(thread_ran[k] == 5);
    if (strict) CHECK(elsewhere == 0);
    if (elsewhere > 0 && node2 > 0) break;
  }
  if (!strict) CHECK(elsewhere > 0 && node2 > 0); /* loose: idle nodes took some of node 2's tasks */
  printf("canopy_omp_task_node(2): %d of 64 tasks on node 2 (%s)\n", node2, strict ? "strict" : "loose");
  free(a);
  return 0;
}
