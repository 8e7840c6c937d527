/* Memory with many outstanding tasks: one thread creates -n tasks (default
 * 10^6) in one taskgroup, none of which may finish before all are created:
 * a task run by another thread first waits for a gate the creator opens
 * after the last one, so the other threads hold one task each and every
 * other task waits in the runtime. Only the creator can run tasks before
 * the gate opens, and only when the runtime makes it (an undeferred task:
 * libgomp does so beyond 64 queued tasks per thread, libomp when a thread's
 * deque is full); such a task does not wait. The program reports the time
 * and prints OUTSTANDING max=<k>: the most tasks that were created and not
 * yet finished at once, which tells how many the runtime really held, and
 * PEAK_RSS kib=<k>, the process's peak resident set (VmHWM) at the end.
 * Checked: every task ran once (the sum of their indices). */
#include <stdatomic.h>

#include "omp_bench.h"

static long n;
static atomic_long outstanding;
static long max_outstanding;
static atomic_int gate;
static int creator;
typedef struct {
  long sum;
  char pad[56];
} slot;
static slot* sums;

static void body(long i) {
  if (omp_get_thread_num() != creator)
    while (!atomic_load_explicit(&gate, memory_order_acquire)) __builtin_ia32_pause();
  sums[omp_get_thread_num()].sum += i;
  atomic_fetch_sub_explicit(&outstanding, 1, memory_order_relaxed);
}

static void run(void* ctx) {
  (void)ctx;
  memset(sums, 0, (size_t)omp_get_max_threads() * sizeof(slot));
  atomic_store(&gate, 0);
  atomic_store(&outstanding, 0);
  max_outstanding = 0;
#pragma omp parallel
#pragma omp single
  {
    creator = omp_get_thread_num();
#pragma omp taskgroup
    {
      for (long i = 0; i < n; ++i) {
        const long now = atomic_fetch_add_explicit(&outstanding, 1, memory_order_relaxed) + 1;
        if (now > max_outstanding) max_outstanding = now;
#pragma omp task firstprivate(i)
        body(i);
      }
      atomic_store_explicit(&gate, 1, memory_order_release);
    }
  }
}
static char err[160];
static const char* check(void* ctx) {
  (void)ctx;
  long s = 0;
  for (int t = 0; t < omp_get_max_threads(); ++t) s += sums[t].sum;
  if (s != n * (n - 1) / 2 || atomic_load(&outstanding) != 0) {
    snprintf(err, sizeof err, "task index sum %ld, expected %ld; %ld tasks unfinished", s, n * (n - 1) / 2,
             atomic_load(&outstanding));
    return err;
  }
  return NULL;
}

int main(int argc, char** argv) {
  bench_args a = bench_parse(argc, argv);
  n = a.n ? a.n : 1000000;
  sums = calloc((size_t)omp_get_max_threads(), sizeof(slot));
  if (!sums) bench_fail("taskmem: out of memory");
  bench_measure(&a, "taskmem", a.threads, 1, "run", run, check, NULL);
  printf("OUTSTANDING max=%ld\n", max_outstanding);
  printf("PEAK_RSS kib=%ld\n", bench_peak_rss_kib());
  return 0;
}
