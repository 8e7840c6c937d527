/* The parts of the libomp ABI (clang 14) that the shared C tests do not
   reach: static loops over every index type (signed, unsigned, 64-bit,
   negative steps, chunked, simd:static), dispatch over unsigned 64-bit,
   ordered static, doacross over two dimensions with a static schedule,
   masked with a filter, critical with a hint, reductions through the lock
   path (a user-defined reduction: no atomics possible) and the atomic path
   (min/max), parallel if(0) (serialized), proc_bind, and threadprivate
   without native TLS (built with -fnoopenmp-use-tls: __kmpc_threadprivate_cached)
   with copyin. Built with clang only; run on canopy's runtime and on libomp. */
#include <omp.h>
#include <stdint.h>
#include <string.h>

#include "omp_check.h"

#define N 1000
static int hits[N];

static void reset(void) { memset(hits, 0, sizeof hits); }
static void all_once(const char* what) {
  for (int i = 0; i < N; ++i)
    if (hits[i] != 1) {
      fprintf(stderr, "%s: iteration %d ran %d times\n", what, i, hits[i]);
      exit(1);
    }
}

typedef struct {
  long sum;
  int count;
} Acc;
#pragma omp declare reduction(acc : Acc : omp_out.sum += omp_in.sum, omp_out.count += omp_in.count) \
    initializer(omp_priv = (Acc){0, 0})

static int tp = 7;
#pragma omp threadprivate(tp)

int main(void) {
  const int nt = omp_get_max_threads();

  /* Static, each type; the body checks the iteration belongs to the range. */
  reset();
#pragma omp parallel for schedule(static)
  for (int i = N - 1; i >= 0; --i) __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
  all_once("static int downwards");
  reset();
#pragma omp parallel for schedule(static, 3)
  for (unsigned i = 0; i < N; i += 1) __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
  all_once("static,3 unsigned");
  reset();
#pragma omp parallel for schedule(static, 5)
  for (int64_t i = 3 * (int64_t)N - 1; i >= 0; i -= 3) __atomic_fetch_add(&hits[i / 3], 1, __ATOMIC_RELAXED);
  all_once("static,5 int64 step -3");
  reset();
#pragma omp parallel for schedule(static)
  for (uint64_t i = 0; i < N; ++i) __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
  all_once("static uint64");
  reset();
#pragma omp parallel for simd schedule(simd : static)
  for (int i = 0; i < N; ++i) __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
  all_once("simd:static");

  /* Unchunked static: contiguous blocks in thread order (the layout programs rely on). */
  int owner[N];
#pragma omp parallel for schedule(static)
  for (int i = 0; i < N; ++i) owner[i] = omp_get_thread_num();
  for (int i = 1; i < N; ++i) CHECK(owner[i] == owner[i - 1] || owner[i] == owner[i - 1] + 1);
  CHECK(owner[0] == 0);

  /* Dispatch over uint64 with a large base (no overflow in the hand-out). */
  reset();
  const uint64_t base = UINT64_MAX - 5 * (uint64_t)N;
#pragma omp parallel for schedule(dynamic, 7)
  for (uint64_t i = base; i < base + 5 * (uint64_t)N; i += 5) __atomic_fetch_add(&hits[(i - base) / 5], 1, __ATOMIC_RELAXED);
  all_once("dynamic,7 uint64");
  reset();
#pragma omp parallel for schedule(guided)
  for (long i = 0; i < N; ++i) __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
  all_once("guided long");

  /* Ordered with a static schedule: the ordered blocks run in iteration order. */
  int seq[N], pos = 0;
#pragma omp parallel for ordered schedule(static)
  for (int i = 0; i < N; ++i) {
#pragma omp ordered
    seq[pos++] = i;
  }
  for (int i = 0; i < N; ++i) CHECK(seq[i] == i);

  /* Doacross, two dimensions, static: each cell after its upper and left neighbours. */
  enum { R = 40, C = 30 };
  static int grid[R][C];
#pragma omp parallel for ordered(2) schedule(static)
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < C; ++j) {
#pragma omp ordered depend(sink : i - 1, j) depend(sink : i, j - 1)
      grid[i][j] = 1 + (i ? grid[i - 1][j] : 0) + (j ? grid[i][j - 1] : 0) - (i && j ? grid[i - 1][j - 1] : 0);
#pragma omp ordered depend(source)
    }
  CHECK(grid[R - 1][C - 1] == R * C);

  /* masked filter(1), critical with a hint. */
  int masked_by = -1, masked_count = 0, in_critical = 0, crit_max = 0;
#pragma omp parallel num_threads(4)
  {
#pragma omp masked filter(1)
    {
      masked_by = omp_get_thread_num();
      ++masked_count;
    }
#pragma omp critical(hinted) hint(omp_sync_hint_contended)
    {
      ++in_critical;
      if (in_critical > crit_max) crit_max = in_critical;
      --in_critical;
    }
  }
  CHECK(masked_count == 1 && masked_by == 1);
  CHECK(crit_max == 1);

  /* Reductions: a user-defined one (the lock path), min and max (atomics allowed). */
  Acc acc = {0, 0};
  int lo = N, hi = -1;
#pragma omp parallel for reduction(acc : acc) reduction(min : lo) reduction(max : hi)
  for (int i = 0; i < N; ++i) {
    acc.sum += i;
    acc.count += 1;
    if (i < lo) lo = i;
    if (i > hi) hi = i;
  }
  CHECK(acc.sum == (long)N * (N - 1) / 2 && acc.count == N);
  CHECK(lo == 0 && hi == N - 1);
  double dsum = 0;
#pragma omp parallel reduction(+ : dsum)
  dsum += 1.5;
  CHECK(dsum == 1.5 * nt);

  /* parallel if(0): a team of one, its own level. */
  volatile int cond = 0;
  int level = -1, size = -1;
#pragma omp parallel if (cond) num_threads(4)
  {
    level = omp_get_level();
    size = omp_get_num_threads();
  }
  CHECK(level == 1 && size == 1);

  /* proc_bind (pushed before the fork): the team still forms. */
  int bound_team = 0;
#pragma omp parallel proc_bind(spread) num_threads(2)
#pragma omp atomic
  ++bound_team;
  CHECK(bound_team == 2);

  /* threadprivate: each thread its own copy, copyin from the initial thread. */
  tp = 42;
  int bad = 0;
#pragma omp parallel copyin(tp) reduction(+ : bad)
  {
    if (tp != 42) ++bad;
    tp = 100 + omp_get_thread_num();
#pragma omp barrier
    if (tp != 100 + omp_get_thread_num()) ++bad;
  }
  CHECK(bad == 0);
  CHECK(tp == 100);
  /* Workers keep their copies between regions (same team size, no dynamic). */
  int kept = 0;
#pragma omp parallel reduction(+ : kept)
  kept += tp == 100 + omp_get_thread_num();
  CHECK(kept == nt);

  printf("kmp constructs: ok on %d threads (%s)\n", nt, canopy_omp_is_canopy ? "canopy" : "another runtime");
  return 0;
}
