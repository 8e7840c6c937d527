/* The floor of a fork-join that waits by yielding, for comparison with an
 * OpenMP runtime's oversubscribed `parallel` (more threads than CPUs): T
 * pthreads, no runtime. Each round the primary bumps a generation; every
 * other thread, yielding until it sees the new generation, counts itself in
 * and yields until the next one; the primary yields until all T - 1 have
 * counted in. Every thread must run once per round, so a round costs at
 * least T / CPUs context switches on the busiest CPU: this measures what
 * that costs on the machine, with nothing else a runtime does (no team
 * set-up, no task checks, no sleeping).
 *
 *   yield_floor THREADS ROUNDS     prints µs per round and switches per round
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static _Alignas(64) atomic_long generation;
static _Alignas(64) atomic_long arrived;
static long rounds;

static void* worker(void* arg) {
  (void)arg;
  for (long r = 1; r <= rounds; ++r) {
    while (atomic_load_explicit(&generation, memory_order_acquire) < r) sched_yield();
    atomic_fetch_add_explicit(&arrived, 1, memory_order_acq_rel);
  }
  return NULL;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long switches(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_nvcsw + ru.ru_nivcsw;
}

int main(int argc, char** argv) {
  if (argc != 3 || atoi(argv[1]) < 1 || atol(argv[2]) < 1) {
    fprintf(stderr, "usage: %s THREADS ROUNDS (both at least 1)\n", argv[0]);
    return 2;
  }
  const int threads = atoi(argv[1]);
  rounds = atol(argv[2]);
  pthread_t* tids = malloc(sizeof *tids * (size_t)threads);
  if (!tids) {
    fprintf(stderr, "yield_floor: out of memory for %d threads\n", threads);
    return 1;
  }
  for (int i = 1; i < threads; ++i)
    if (pthread_create(&tids[i], NULL, worker, NULL) != 0) {
      fprintf(stderr, "yield_floor: cannot create thread %d\n", i);
      return 1;
    }
  const long s0 = switches();
  const double t0 = now();
  for (long r = 1; r <= rounds; ++r) {
    atomic_store_explicit(&generation, r, memory_order_release);
    while (atomic_load_explicit(&arrived, memory_order_acquire) < r * (threads - 1)) sched_yield();
  }
  const double t = now() - t0;
  const long s = switches() - s0;
  for (int i = 1; i < threads; ++i) pthread_join(tids[i], NULL);
  free(tids);
  printf("RESULT bench=yield-floor impl=pthreads threads=%d rep=0 seconds=%.9f count=%ld unit=round\n", threads, t,
         rounds);
  printf("%d threads: %.2f us per round, %.1f context switches per round\n", threads, t / (double)rounds * 1e6,
         (double)s / (double)rounds);
  return 0;
}
