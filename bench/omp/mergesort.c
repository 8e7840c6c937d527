/* Merge sort with tasks (BOTS sort's shape, simplified): the halves are
 * sorted by two tasks, then merged by a parallel merge (split at the median
 * of the larger half, two merge tasks) down to cut-offs below which
 * a sequential merge sort / merge run. Default 2^21 64-bit keys from a
 * fixed generator; checked: sorted, and the same multiset (sum and xor). */
#include "omp_bench.h"

#define SORT_CUTOFF 2048
#define MERGE_CUTOFF 8192

typedef uint64_t key;

static void insertion(key* a, long n) {
  for (long i = 1; i < n; ++i) {
    const key v = a[i];
    long j = i - 1;
    while (j >= 0 && a[j] > v) {
      a[j + 1] = a[j];
      --j;
    }
    a[j + 1] = v;
  }
}

static void seqmerge(const key* a, long na, const key* b, long nb, key* out) {
  long i = 0, j = 0, k = 0;
  while (i < na && j < nb) out[k++] = a[i] <= b[j] ? a[i++] : b[j++];
  while (i < na) out[k++] = a[i++];
  while (j < nb) out[k++] = b[j++];
}

static long lower_bound(const key* a, long n, key v) {
  long lo = 0, hi = n;
  while (lo < hi) {
    const long mid = (lo + hi) / 2;
    if (a[mid] < v) lo = mid + 1; else hi = mid;
  }
  return lo;
}

static void pmerge(const key* a, long na, const key* b, long nb, key* out) {
  if (na + nb <= MERGE_CUTOFF) {
    seqmerge(a, na, b, nb, out);
    return;
  }
  if (na < nb) {
    const key* t = a; a = b; b = t;
    const long tn = na; na = nb; nb = tn;
  }
  const long ma = na / 2;
  const long mb = lower_bound(b, nb, a[ma]);
#pragma omp task
  pmerge(a, ma, b, mb, out);
#pragma omp task
  pmerge(a + ma, na - ma, b + mb, nb - mb, out + ma + mb);
#pragma omp taskwait
}

/* Sorts a[0..n) using tmp[0..n); the result ends in a. */
static void seqsort(key* a, key* tmp, long n) {
  if (n <= 32) {
    insertion(a, n);
    return;
  }
  const long h = n / 2;
  seqsort(a, tmp, h);
  seqsort(a + h, tmp + h, n - h);
  seqmerge(a, h, a + h, n - h, tmp);
  memcpy(a, tmp, (size_t)n * sizeof(key));
}

static void psort(key* a, key* tmp, long n) {
  if (n <= SORT_CUTOFF) {
    seqsort(a, tmp, n);
    return;
  }
  const long h = n / 2;
#pragma omp task
  psort(a, tmp, h);
#pragma omp task
  psort(a + h, tmp + h, n - h);
#pragma omp taskwait
  pmerge(a, h, a + h, n - h, tmp);
  memcpy(a, tmp, (size_t)n * sizeof(key));
}

static long n;
static key *data, *tmp, *input;
static key want_sum, want_xor;

static void run(void* ctx) {
  (void)ctx;
  memcpy(data, input, (size_t)n * sizeof(key));
#pragma omp parallel
#pragma omp single
  psort(data, tmp, n);
}
static char err[160];
static const char* check(void* ctx) {
  (void)ctx;
  key s = 0, x = 0;
  for (long i = 0; i < n; ++i) {
    if (i && data[i - 1] > data[i]) {
      snprintf(err, sizeof err, "not sorted at %ld of %ld", i, n);
      return err;
    }
    s += data[i];
    x ^= data[i];
  }
  if (s != want_sum || x != want_xor) return "the sorted keys are not the input's keys";
  return NULL;
}

int main(int argc, char** argv) {
  bench_args a = bench_parse(argc, argv);
  n = a.n ? a.n : (1L << 21);
  data = malloc((size_t)n * sizeof(key));
  tmp = malloc((size_t)n * sizeof(key));
  input = malloc((size_t)n * sizeof(key));
  if (!data || !tmp || !input) bench_fail("mergesort: cannot allocate %ld keys", n);
  for (long i = 0; i < n; ++i) {
    input[i] = bench_mix((uint64_t)i);
    want_sum += bench_mix((uint64_t)i);
    want_xor ^= bench_mix((uint64_t)i);
  }
  bench_measure(&a, "mergesort", a.threads, 1, "run", run, check, NULL);
  free(data);
  free(tmp);
  free(input);
  return 0;
}
