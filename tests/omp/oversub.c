/* Oversubscription on canopy's OpenMP runtime: teams of 16 and 32 threads
   (and nested teams) on however few CPUs the machine has, where waiting
   threads sleep at once instead of spinning and workers park at the join.
   Checks the barrier's phase invariants over many barriers, fork/join of
   teams of every size, a task that only a parked worker can run, nested
   teams with barriers, cancellation at a barrier, dependent tasks one
   thread creates for the others (the creator seldom sleeps), and an
   ordered loop (each turn wakes one thread), and a task and a taskwait per
   thread and iteration (the waiter yields). Run with
   OMP_CANCELLATION=true. Exits non-zero on the first wrong result; a broken
   wake-up shows as a check failing after its time limit, not as a hang. */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "omp_check.h"


#define MAXT 64

/* Many barriers: after barrier r every thread has written phase r, and no
   thread has gone past r + 1 (it would have passed the next barrier
   before everyone reached it). */
static void barrier_phases(int nt, int rounds) {
  static volatile int phase[MAXT];
  for (int t = 0; t < MAXT; ++t) phase[t] = 0;
  int bad = 0;
#pragma omp parallel num_threads(nt) reduction(+ : bad)
  {
    const int me = omp_get_thread_num(), n = omp_get_num_threads();
    if (n != nt) bad++;
    for (int r = 1; r <= rounds; ++r) {
      phase[me] = r;
#pragma omp barrier
      for (int t = 0; t < n; ++t) {
        const int p = phase[t];
        if (p != r && p != r + 1) bad++;
      }
#pragma omp barrier
    }
  }
  if (bad) fprintf(stderr, "barrier_phases(%d threads): %d wrong phases\n", nt, bad);
  CHECK(bad == 0);
}

/* Fork/join of every team size up to nt, back to back: each thread runs
   once with a distinct number, and the region's writes are all visible
   after the join (workers parked at the join must count as left only once
   the region is over). */
static void fork_join_sizes(int nt, int repeats) {
  for (int k = 0; k < repeats; ++k)
    for (int n = 1; n <= nt; ++n) {
      int seen[MAXT] = {0};
      int count = 0;
#pragma omp parallel num_threads(n)
      {
        seen[omp_get_thread_num()]++;
#pragma omp atomic
        count++;
      }
      CHECK(count == n);
      for (int t = 0; t < n; ++t) CHECK(seen[t] == 1);
    }
}

/* A task created after the other threads reached the end of the region
   (and parked there), which only another thread can run: its creator
   busy-waits for it without a scheduling point. */
static void task_for_parked_workers(int nt) {
  if (nt < 2) return;
  for (int rep = 0; rep < 20; ++rep) {
    int ran = 0, timed_out = 0;
#pragma omp parallel num_threads(nt)
    {
#pragma omp master
      {
        /* Let the others reach the join and park. */
        const double t0 = omp_get_wtime();
        while (omp_get_wtime() - t0 < 0.002) {
        }
#pragma omp task shared(ran)
        __atomic_store_n(&ran, 1, __ATOMIC_RELEASE);
        const double t1 = omp_get_wtime();
        while (!__atomic_load_n(&ran, __ATOMIC_ACQUIRE) && omp_get_wtime() - t1 < 10.0) {
        }
        if (!__atomic_load_n(&ran, __ATOMIC_ACQUIRE)) timed_out = 1;
      }
    }
    CHECK(!timed_out);
    CHECK(ran);
  }
}

/* Late tasks at the join: one thread creates tasks at the end of the
   region while the others are already waiting there; all of them run
   before the region ends. */
static void late_tasks(int nt) {
  for (int rep = 0; rep < 50; ++rep) {
    int done = 0;
#pragma omp parallel num_threads(nt)
    {
      if (omp_get_thread_num() == omp_get_num_threads() - 1)
        for (int i = 0; i < 64; ++i) {
#pragma omp task shared(done)
          {
#pragma omp atomic
            done++;
          }
        }
    }
    CHECK(done == 64);
  }
}

/* Nested teams, together more threads than CPUs, barriers in the inner ones. */
static void nested_barriers(int outer, int inner, int rounds) {
  int bad = 0;
  omp_set_max_active_levels(2);
#pragma omp parallel num_threads(outer) reduction(+ : bad)
  {
    volatile int phase[MAXT];
#pragma omp parallel num_threads(inner) shared(phase) reduction(+ : bad)
    {
      const int me = omp_get_thread_num(), n = omp_get_num_threads();
      if (n != inner || omp_get_level() != 2) bad++;
      for (int r = 1; r <= rounds; ++r) {
        phase[me] = r;
#pragma omp barrier
        for (int t = 0; t < n; ++t)
          if (phase[t] != r && phase[t] != r + 1) bad++;
#pragma omp barrier
      }
    }
  }
  omp_set_max_active_levels(1);
  CHECK(bad == 0);
}

/* Cancellation at a barrier: one thread cancels the region while the
   others wait at barriers; every thread leaves the region, and the team
   works normally afterwards. */
static void cancel_at_barrier(int nt) {
  if (!omp_get_cancellation()) {
    fprintf(stderr, "cancel_at_barrier: OMP_CANCELLATION is not true, skipped\n");
    return;
  }
  for (int rep = 0; rep < 20; ++rep) {
    int left = 0, past = 0;
#pragma omp parallel num_threads(nt)
    {
      for (int r = 0; r < 1000; ++r) {
        if (r == 10 && omp_get_thread_num() == rep % nt) {
#pragma omp cancel parallel
        }
#pragma omp barrier
#pragma omp cancellation point parallel
        if (r > 11) {
#pragma omp atomic
          past++;
        }
      }
#pragma omp atomic
      left++;
    }
    /* Cancelled threads leave at a cancellation point; a thread that saw the
       cancellation only at the region's end still counts in left. */
    CHECK(past == 0);
    (void)left;
  }
  barrier_phases(nt, 50);
}

/* One thread creates chains of dependent tasks (inout, one chain per
   thread) that the others finish: every task runs in its chain's order, and
   the creator, who takes the parent's dependence-map lock for each task
   while finishers take it for theirs, seldom sleeps on that lock (a short
   poll first, futex.hpp's lock_spins: a sleep per collision made such a
   loop 3x slower). Its voluntary context switches while creating, summed
   over three rounds, must stay under 2% of the tasks (with the creator
   sleeping at once on a taken lock: up to 4.5% in one round here, 0.1% with
   the poll, on 2 CPUs with or without two busy processes beside). */
static void dependent_chains(int nt, int tasks) {
  static long chains[MAXT * 8], order_bad;
  long slept = 0;
  for (int round = 0; round < 3; ++round) {
    for (int c = 0; c < MAXT; ++c) chains[c * 8] = 0;
    order_bad = 0;
#pragma omp parallel num_threads(nt)
#pragma omp single
    {
      const int nchains = omp_get_num_threads();
      struct rusage r0, r1;
      getrusage(RUSAGE_THREAD, &r0);
      for (int i = 0; i < tasks; ++i) {
        long* obj = &chains[(i % nchains) * 8];
        const long expect = i / nchains;  /* tasks of this chain before this one */
#pragma omp task depend(inout : obj[0]) firstprivate(obj, expect)
        {
          if (obj[0] != expect) {
#pragma omp atomic
            order_bad++;
          }
          obj[0]++;
        }
      }
      getrusage(RUSAGE_THREAD, &r1);
      slept += r1.ru_nvcsw - r0.ru_nvcsw;
    }
    long total = 0;
    for (int c = 0; c < MAXT; ++c) total += chains[c * 8];
    CHECK(total == tasks);
    CHECK(order_bad == 0);
  }
  if (slept * 50 >= 3L * tasks)
    fprintf(stderr, "dependent_chains(%d threads): the creator slept %ld times for %d tasks\n", nt, slept, 3 * tasks);
  CHECK(slept * 50 < 3L * tasks);
}

/* An ordered loop handed round the team one iteration at a time: the
   ordered blocks run in iteration order, and passing the turn wakes only
   the thread whose turn it is (each sleeper sleeps on the turn word with
   its turn's bit): the process's voluntary context switches stay under 4
   per iteration. Waking every waiter at each turn made each of them switch
   at every iteration (about 15 per iteration at 16 threads). */
static void ordered_turns(int nt, int iterations) {
  int next = 0, bad = 0;
  struct rusage r0, r1;
  getrusage(RUSAGE_SELF, &r0);
#pragma omp parallel for ordered schedule(static, 1) num_threads(nt)
  for (int i = 0; i < iterations; ++i) {
#pragma omp ordered
    {
      if (next != i) bad++;
      next++;
    }
  }
  getrusage(RUSAGE_SELF, &r1);
  const long switches = r1.ru_nvcsw - r0.ru_nvcsw;
  CHECK(next == iterations);
  CHECK(bad == 0);
  if (switches >= 4L * iterations)
    fprintf(stderr, "ordered_turns(%d threads): %ld voluntary switches for %d iterations\n", nt, switches, iterations);
  CHECK(switches < 4L * iterations);
}

/* Every thread creates a task and waits for it, many times: each task has
   run when its taskwait returns. Threads that finished their loop take the
   others' tasks from the region's end, so an owner often waits for a task
   running elsewhere (oversubscribed, it yields before it sleeps). How often
   it sleeps varies too much from run to run to check here (0-1,300 sleeps
   per run before the yield, 0-130 after, 16-32 threads on 2 CPUs); the
   benchmark `canopy_bench_omp_kmp_overhead N 6` times it. */
static void task_taskwait_loop(int nt, int iterations) {
  long wrong = 0, ran_total = 0;
#pragma omp parallel num_threads(nt) reduction(+ : wrong, ran_total)
  for (int i = 0; i < iterations; ++i) {
    int ran = 0;
#pragma omp task shared(ran)
    ran = 1;
#pragma omp taskwait
    if (!ran) wrong++;
    ran_total += ran;
  }
  CHECK(wrong == 0);
  CHECK(ran_total == (long)nt * iterations);
}

int main(void) {
  CHECK_CANOPY();
  const int nt = omp_get_max_threads() > MAXT ? MAXT : omp_get_max_threads();
  printf("oversub: %d threads on %d CPUs\n", nt, omp_get_num_procs());
  barrier_phases(nt, 2000);
  barrier_phases(2 * nt > MAXT ? MAXT : 2 * nt, 500);
  fork_join_sizes(nt, 20);
  task_for_parked_workers(nt);
  late_tasks(nt);
  nested_barriers(4, nt / 2 > 1 ? nt / 2 : 2, 200);
  cancel_at_barrier(nt);
  dependent_chains(nt, 20000);
  ordered_turns(nt, 2000);
  task_taskwait_loop(nt, 20000);
  printf("oversub: ok\n");
  return 0;
}
