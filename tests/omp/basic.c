/* Runs on canopy's OpenMP runtime (LD_LIBRARY_PATH): parallel, nested,
   barrier, loops of every schedule, single/copyprivate, critical, locks,
   sections, ordered; exits non-zero on the first wrong result. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "omp_check.h"


#define N 10007
static int hits[N];

static void check_loop_hits(const char* what) {
  for (int i = 0; i < N; ++i)
    if (hits[i] != 1) {
      fprintf(stderr, "%s: iteration %d ran %d times\n", what, i, hits[i]);
      exit(1);
    }
  for (int i = 0; i < N; ++i) hits[i] = 0;
}

int main(void) {
  CHECK_CANOPY();
  for (int nt = 1; nt <= 8; nt *= 2) {
    int count = 0;
#pragma omp parallel num_threads(nt)
    {
#pragma omp atomic
      count++;
      CHECK(omp_get_num_threads() == nt);
    }
    CHECK(count == nt);

    /* barrier: every thread sees all writes of the phase before */
    int phase[16] = {0};
#pragma omp parallel num_threads(nt)
    {
      int me = omp_get_thread_num();
      for (int r = 1; r <= 50; ++r) {
        phase[me] = r;
#pragma omp barrier
        for (int t = 0; t < nt; ++t) CHECK(phase[t] == r);
#pragma omp barrier
      }
    }

#pragma omp parallel for schedule(static) num_threads(nt)
    for (int i = 0; i < N; ++i) hits[i]++;
    check_loop_hits("static");
#pragma omp parallel for schedule(static, 7) num_threads(nt)
    for (int i = 0; i < N; ++i) hits[i]++;
    check_loop_hits("static,7");
#pragma omp parallel for schedule(dynamic, 3) num_threads(nt)
    for (int i = 0; i < N; ++i) hits[i]++;
    check_loop_hits("dynamic,3");
#pragma omp parallel for schedule(guided, 2) num_threads(nt)
    for (int i = 0; i < N; ++i) hits[i]++;
    check_loop_hits("guided,2");
#pragma omp parallel for schedule(runtime) num_threads(nt)
    for (int i = 0; i < N; ++i) hits[i]++;
    check_loop_hits("runtime");
#pragma omp parallel num_threads(nt)
    {
#pragma omp for schedule(dynamic) nowait
      for (int i = N - 1; i >= 0; i -= 2) hits[i]++;
#pragma omp for schedule(guided) nowait
      for (int i = N - 2; i >= 0; i -= 2) hits[i]++;
    }
    check_loop_hits("nowait, negative step");
    unsigned long long su = 0;
#pragma omp parallel for schedule(dynamic, 5) reduction(+ : su) num_threads(nt)
    for (unsigned long long i = 10; i < 10000000000ULL; i += 1000000000ULL) su += i;
    CHECK(su == 10 * 10 + 45ULL * 1000000000ULL);

    /* ordered */
    int next = 0, bad = 0;
#pragma omp parallel for ordered schedule(dynamic, 2) num_threads(nt)
    for (int i = 0; i < 200; ++i) {
#pragma omp ordered
      {
        if (next != i) bad = 1;
        next++;
      }
    }
    CHECK(!bad && next == 200);

    /* single / copyprivate */
    int singles = 0;
#pragma omp parallel num_threads(nt)
    {
      for (int r = 0; r < 20; ++r) {
#pragma omp single
        singles++;
      }
      int v;
#pragma omp single copyprivate(v)
      v = 42 + nt;
      CHECK(v == 42 + nt);
    }
    CHECK(singles == 20);

    /* single nowait: threads run ahead through many singles, each runs once;
       the same again in a second region of the same team (the count restarts) */
    for (int rep = 0; rep < 2; ++rep) {
      int once[500] = {0};
#pragma omp parallel num_threads(nt)
      for (int r = 0; r < 500; ++r) {
#pragma omp single nowait
        {
#pragma omp atomic
          once[r]++;
        }
      }
      for (int r = 0; r < 500; ++r) CHECK(once[r] == 1);
    }

    /* critical and locks */
    long crit = 0, crit2 = 0, locked = 0, nlocked = 0;
    omp_lock_t lock;
    omp_nest_lock_t nlock;
    omp_init_lock(&lock);
    omp_init_nest_lock(&nlock);
#pragma omp parallel num_threads(nt)
    for (int r = 0; r < 1000; ++r) {
#pragma omp critical
      crit++;
#pragma omp critical(other)
      crit2++;
      omp_set_lock(&lock);
      locked++;
      omp_unset_lock(&lock);
      omp_set_nest_lock(&nlock);
      omp_set_nest_lock(&nlock);
      nlocked++;
      omp_unset_nest_lock(&nlock);
      omp_unset_nest_lock(&nlock);
    }
    CHECK(crit == 1000L * nt && crit2 == 1000L * nt && locked == 1000L * nt && nlocked == 1000L * nt);
    omp_destroy_lock(&lock);
    omp_destroy_nest_lock(&nlock);

    /* sections */
    int sec[4] = {0};
#pragma omp parallel sections num_threads(nt)
    {
#pragma omp section
      sec[0]++;
#pragma omp section
      sec[1]++;
#pragma omp section
      sec[2]++;
#pragma omp section
      sec[3]++;
    }
    CHECK(sec[0] == 1 && sec[1] == 1 && sec[2] == 1 && sec[3] == 1);
  }

  /* nested teams and level queries */
  omp_set_max_active_levels(2);
  int inner_total = 0;
#pragma omp parallel num_threads(2)
  {
    int outer = omp_get_thread_num();
#pragma omp parallel num_threads(3)
    {
      CHECK(omp_get_level() == 2 && omp_get_active_level() == 2);
      CHECK(omp_get_num_threads() == 3 && omp_get_team_size(1) == 2);
      CHECK(omp_get_ancestor_thread_num(1) == outer);
#pragma omp atomic
      inner_total++;
    }
  }
  CHECK(inner_total == 6);
  CHECK(omp_get_level() == 0 && omp_get_num_threads() == 1);
  printf("basic: ok\n");
  return 0;
}
