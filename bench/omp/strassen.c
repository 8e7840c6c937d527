/* Strassen's matrix multiplication with tasks (BOTS strassen's shape): each
 * level splits the n x n product into the seven products M1..M7, one task
 * each (with its own temporaries), waits, and combines them; below a cut-off
 * (64) a plain triple loop multiplies. Default n = 512 (-n: a power of two
 * >= 64). Checked: 256 sampled entries of C against their dot products
 * (relative tolerance 1e-9). */
#include <math.h>

#include "omp_bench.h"

#define CUTOFF 64

/* Matrices are views: a pointer and a row stride. */
static void naive(const double* a, long sa, const double* b, long sb, double* c, long sc, long n) {
  for (long i = 0; i < n; ++i) {
    for (long j = 0; j < n; ++j) c[i * sc + j] = 0;
    for (long k = 0; k < n; ++k) {
      const double x = a[i * sa + k];
      for (long j = 0; j < n; ++j) c[i * sc + j] += x * b[k * sb + j];
    }
  }
}
static void add(const double* a, long sa, const double* b, long sb, double* c, long n, double sign) {
  for (long i = 0; i < n; ++i)
    for (long j = 0; j < n; ++j) c[i * n + j] = a[i * sa + j] + sign * b[i * sb + j];
}
static void copy(const double* a, long sa, double* c, long n) {
  for (long i = 0; i < n; ++i) memcpy(c + i * n, a + i * sa, (size_t)n * sizeof(double));
}

static void strassen(const double* A, long sa, const double* B, long sb, double* C, long sc, long n);

/* M = (a1 + s1 a2) (b1 + s2 b2); a2 / b2 NULL: just a1 / b1. */
static void product(const double* a1, const double* a2, long sa, double s1, const double* b1, const double* b2,
                    long sb, double s2, double* m, long h) {
  double* ta = malloc((size_t)(2 * h * h) * sizeof(double));
  if (!ta) bench_fail("strassen: out of memory");
  double* tb = ta + h * h;
  if (a2) add(a1, sa, a2, sa, ta, h, s1); else copy(a1, sa, ta, h);
  if (b2) add(b1, sb, b2, sb, tb, h, s2); else copy(b1, sb, tb, h);
  strassen(ta, h, tb, h, m, h, h);
  free(ta);
}

static void strassen(const double* A, long sa, const double* B, long sb, double* C, long sc, long n) {
  if (n <= CUTOFF) {
    naive(A, sa, B, sb, C, sc, n);
    return;
  }
  const long h = n / 2;
  const double *a11 = A, *a12 = A + h, *a21 = A + h * sa, *a22 = A + h * sa + h;
  const double *b11 = B, *b12 = B + h, *b21 = B + h * sb, *b22 = B + h * sb + h;
  double* m = malloc((size_t)(7 * h * h) * sizeof(double));
  if (!m) bench_fail("strassen: out of memory");
  double *m1 = m, *m2 = m + h * h, *m3 = m + 2 * h * h, *m4 = m + 3 * h * h, *m5 = m + 4 * h * h,
         *m6 = m + 5 * h * h, *m7 = m + 6 * h * h;
#pragma omp task
  product(a11, a22, sa, 1, b11, b22, sb, 1, m1, h);
#pragma omp task
  product(a21, a22, sa, 1, b11, NULL, sb, 0, m2, h);
#pragma omp task
  product(a11, NULL, sa, 0, b12, b22, sb, -1, m3, h);
#pragma omp task
  product(a22, NULL, sa, 0, b21, b11, sb, -1, m4, h);
#pragma omp task
  product(a11, a12, sa, 1, b22, NULL, sb, 0, m5, h);
#pragma omp task
  product(a21, a11, sa, -1, b11, b12, sb, 1, m6, h);
#pragma omp task
  product(a12, a22, sa, -1, b21, b22, sb, 1, m7, h);
#pragma omp taskwait
  for (long i = 0; i < h; ++i)
    for (long j = 0; j < h; ++j) {
      const long k = i * h + j;
      C[i * sc + j] = m1[k] + m4[k] - m5[k] + m7[k];
      C[i * sc + j + h] = m3[k] + m5[k];
      C[(i + h) * sc + j] = m2[k] + m4[k];
      C[(i + h) * sc + j + h] = m1[k] - m2[k] + m3[k] + m6[k];
    }
  free(m);
}

static long n;
static double *A, *B, *C;
static void run(void* ctx) {
  (void)ctx;
#pragma omp parallel
#pragma omp single
  strassen(A, n, B, n, C, n, n);
}
static char err[200];
static const char* check(void* ctx) {
  (void)ctx;
  for (int s = 0; s < 256; ++s) {
    const long i = (long)(bench_mix(2 * (uint64_t)s) % (uint64_t)n), j = (long)(bench_mix(2 * (uint64_t)s + 1) % (uint64_t)n);
    double want = 0, mag = 0;
    for (long k = 0; k < n; ++k) {
      want += A[i * n + k] * B[k * n + j];
      mag += fabs(A[i * n + k] * B[k * n + j]);
    }
    if (!isfinite(C[i * n + j]) || fabs(C[i * n + j] - want) > 1e-9 * (1 + mag)) {
      snprintf(err, sizeof err, "C(%ld, %ld) = %.17g, expected %.17g", i, j, C[i * n + j], want);
      return err;
    }
  }
  return NULL;
}

int main(int argc, char** argv) {
  bench_args a = bench_parse(argc, argv);
  n = a.n ? a.n : 512;
  if (n < CUTOFF || (n & (n - 1))) bench_fail("strassen: -n %ld is not a power of two >= %d", n, CUTOFF);
  A = malloc((size_t)(n * n) * sizeof(double));
  B = malloc((size_t)(n * n) * sizeof(double));
  C = malloc((size_t)(n * n) * sizeof(double));
  if (!A || !B || !C) bench_fail("strassen: cannot allocate three %ld x %ld matrices", n, n);
  for (long k = 0; k < n * n; ++k) {
    A[k] = (double)(bench_mix((uint64_t)k) % 2001) / 1000.0 - 1.0;
    B[k] = (double)(bench_mix((uint64_t)k + 0x1234567) % 2001) / 1000.0 - 1.0;
  }
  bench_measure(&a, "strassen", a.threads, 1, "run", run, check, NULL);
  return 0;
}
