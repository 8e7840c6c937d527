/* Tasks, teams and extensions through the libomp ABI (clang 14) beyond
   what the shared tests reach: if(0) tasks with dependences, taskwait
   depend, mutexinoutset, taskloop (num_tasks, grainsize, nogroup,
   firstprivate and lastprivate), cancel taskgroup, reduction(task, ...) on
   parallel and on a loop, host teams with distribute (static, chunked,
   dynamic inner schedule), a target region on the host, and libomp's
   kmp_* extensions. Built with clang only; run on canopy and on libomp. */
#include <omp.h>
#include <sched.h>
#include <string.h>

#include "omp_check.h"

void kmp_set_stacksize_s(size_t);
size_t kmp_get_stacksize_s(void);
void kmp_set_blocktime(int);
int kmp_get_blocktime(void);
void* kmp_malloc(size_t);
void* kmp_aligned_malloc(size_t, size_t);
void kmp_free(void*);
typedef void* kmp_affinity_mask_t;
void kmp_create_affinity_mask(kmp_affinity_mask_t*);
void kmp_destroy_affinity_mask(kmp_affinity_mask_t*);
int kmp_set_affinity_mask_proc(int, kmp_affinity_mask_t*);
int kmp_get_affinity_mask_proc(int, kmp_affinity_mask_t*);
int kmp_get_affinity(kmp_affinity_mask_t*);

#define N 1000

int main(void) {
  CHECK_CANOPY();
  kmp_set_stacksize_s(4 << 20); /* before the first region: for the threads it starts */
  CHECK(kmp_get_stacksize_s() == (size_t)4 << 20);
  const int nt = omp_get_max_threads();

  /* if(0) tasks after their dependences; taskwait depend. */
  int a = 0, b = 0, order[4], pos = 0;
#pragma omp parallel
#pragma omp single
  {
#pragma omp task depend(out : a) shared(a, order, pos)
    {
      for (volatile int k = 0; k < 100000; ++k) {
      }
      a = 1;
      order[__atomic_fetch_add(&pos, 1, __ATOMIC_SEQ_CST)] = 1;
    }
#pragma omp task depend(in : a) depend(out : b) if (0) shared(a, b, order, pos)
    {
      b = a + 1;
      order[__atomic_fetch_add(&pos, 1, __ATOMIC_SEQ_CST)] = 2;
    }
    CHECK(b == 2); /* undeferred: done when the construct ends */
#pragma omp task depend(inout : b) shared(b)
    b *= 10;
#pragma omp taskwait depend(in : b)
    CHECK(b == 20);
  }
  CHECK(order[0] == 1 && order[1] == 2);

  /* mutexinoutset: exclusive, any order; then an in after all of them. */
  int m = 0, inside = 0, overlap = 0;
#pragma omp parallel
#pragma omp single
  {
    for (int i = 0; i < 20; ++i) {
#pragma omp task depend(mutexinoutset : m) shared(m, inside, overlap)
      {
        if (__atomic_add_fetch(&inside, 1, __ATOMIC_SEQ_CST) > 1) overlap = 1;
        m += 1;
        __atomic_sub_fetch(&inside, 1, __ATOMIC_SEQ_CST);
      }
    }
#pragma omp task depend(in : m) shared(m)
    CHECK(m == 20);
  }
  CHECK(!overlap && m == 20);

  /* taskloop: every iteration once, in the requested number of tasks. */
  int hits[N];
  memset(hits, 0, sizeof hits);
  int tasks_seen = 0, lastv = -1, base = 5;
#pragma omp parallel
#pragma omp single
  {
#pragma omp taskloop num_tasks(7) firstprivate(base) lastprivate(lastv)
    for (int i = 0; i < N; ++i) {
      __atomic_fetch_add(&hits[i], base - 4, __ATOMIC_RELAXED);
      lastv = i;
    }
#pragma omp taskloop grainsize(64) nogroup
    for (int i = 0; i < N; ++i) {
      if (i % 64 == 0) __atomic_fetch_add(&tasks_seen, 1, __ATOMIC_RELAXED); /* N / 64 tasks of 64..127 */
      __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
    }
#pragma omp taskwait
  }
  for (int i = 0; i < N; ++i) CHECK(hits[i] == 2);
  CHECK(lastv == N - 1);
  CHECK(tasks_seen == (N + 63) / 64); /* every multiple of 64 ran once */

  /* cancel taskgroup: tasks created after the cancel do not run. */
  int ran = 0;
#pragma omp parallel
#pragma omp single
#pragma omp taskgroup
  {
    for (int i = 0; i < 200; ++i) {
#pragma omp task shared(ran) firstprivate(i)
      {
        if (i == 0) {
#pragma omp cancel taskgroup
        }
        __atomic_fetch_add(&ran, 1, __ATOMIC_RELAXED);
      }
      if (i == 0) {
#pragma omp taskwait
      }
    }
  }
  if (omp_get_cancellation()) CHECK(ran < 200);

  /* reduction(task, +: x) on parallel and on a loop: tasks add into it. */
  long x = 0, y = 0;
#pragma omp parallel reduction(task, + : x)
  {
#pragma omp task in_reduction(+ : x)
    x += 2;
    x += 1;
  }
  CHECK(x == 3L * nt);
#pragma omp parallel
#pragma omp for reduction(task, + : y)
  for (int i = 0; i < 100; ++i) {
#pragma omp task in_reduction(+ : y) firstprivate(i)
    y += i;
  }
  CHECK(y == 4950);

  /* teams on the host: distribute, distribute parallel for (static and dynamic). */
  memset(hits, 0, sizeof hits);
  int teams_seen = 0;
#pragma omp teams num_teams(3)
  {
    if (omp_get_team_num() == 0) teams_seen = omp_get_num_teams();
#pragma omp distribute
    for (int i = 0; i < N; ++i) __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
#pragma omp distribute dist_schedule(static, 5)
    for (int i = 0; i < N; ++i) __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
  }
  CHECK(teams_seen == 3 || (!canopy_omp_is_canopy && teams_seen >= 1)); /* libomp: at most one team per CPU */
#pragma omp teams distribute parallel for num_teams(2)
  for (int i = 0; i < N; ++i) __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
#pragma omp teams distribute parallel for schedule(dynamic, 3) num_teams(2)
  for (int i = 0; i < N; ++i) __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
  for (int i = 0; i < N; ++i) CHECK(hits[i] == 4);

  /* target on the host (no offload device). */
  int t_sum = 0, on_host = 0;
#pragma omp target map(tofrom : t_sum, on_host)
  {
    on_host = omp_is_initial_device();
#pragma omp parallel for reduction(+ : t_sum)
    for (int i = 0; i < 100; ++i) t_sum += i;
  }
  CHECK(t_sum == 4950 && on_host);

  /* kmp_* extensions. */
  kmp_set_blocktime(0);
  CHECK(kmp_get_blocktime() == 0);
  int blocked = 0;
#pragma omp parallel reduction(+ : blocked)
  blocked += 1;
  CHECK(blocked == nt);
  kmp_set_blocktime(200);
  char* p = kmp_aligned_malloc(100, 256);
  CHECK(p && ((size_t)p & 255) == 0);
  kmp_free(p);
  kmp_affinity_mask_t mask;
  kmp_create_affinity_mask(&mask);
  CHECK(kmp_get_affinity(&mask) == 0);
  int any = 0;
  for (int c = 0; c < 1024; ++c) any |= kmp_get_affinity_mask_proc(c, &mask) == 1;
  CHECK(any);
  kmp_destroy_affinity_mask(&mask);

  printf("kmp tasks: ok on %d threads (%s)\n", nt, canopy_omp_is_canopy ? "canopy" : "another runtime");
  return 0;
}
