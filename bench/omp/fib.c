/* fib(n) with one task per call (BOTS fib without a cut-off): the cost of
 * task creation, scheduling and taskwait when tasks do almost nothing.
 * Default n = 27 (~300,000 tasks); checked against the closed loop. */
#include "omp_bench.h"

static long fib(int n) {
  if (n < 2) return n;
  long x, y;
#pragma omp task shared(x)
  x = fib(n - 1);
#pragma omp task shared(y)
  y = fib(n - 2);
#pragma omp taskwait
  return x + y;
}

static int n;
static long result;
static void run(void* ctx) {
  (void)ctx;
#pragma omp parallel
#pragma omp single
  result = fib(n);
}
static char err[128];
static const char* check(void* ctx) {
  (void)ctx;
  long a = 0, b = 1;
  for (int i = 0; i < n; ++i) {
    const long c = a + b;
    a = b;
    b = c;
  }
  if (result != a) {
    snprintf(err, sizeof err, "fib(%d) = %ld, expected %ld", n, result, a);
    return err;
  }
  return NULL;
}

int main(int argc, char** argv) {
  bench_args a = bench_parse(argc, argv);
  n = a.n ? (int)a.n : 27;
  if (n > 60) bench_fail("fib: -n %d is too large (at most 60)", n);
  bench_measure(&a, "fib", a.threads, 1, "run", run, check, NULL);
  return 0;
}
