/* Tiled Cholesky factorisation with `depend` (the OpenMP form of
 * bench/dataflow/cholesky, with plain C tile kernels instead of BLAS so the
 * program needs nothing but the OpenMP runtime): an N x N symmetric
 * positive definite matrix in T x T tiles of B x B, lower triangle; one
 * thread creates potrf, trsm, syrk and gemm tasks in the right-looking
 * order, each with in / inout dependencies on its tiles. Default N = 1024,
 * B = 64 (816 tasks); -n sets N (a multiple of 64). Checked: 256 sampled
 * entries of L L^T against A (relative tolerance 1e-9). */
#include <math.h>

#include "omp_bench.h"

#define B 64

static long n, nt;
static double *orig, *tiles; /* tiles: tile (i, j) (i >= j) at tiles + (i * nt + j) * B * B, row-major */

static double* T(double* m, long i, long j) { return m + (i * nt + j) * B * B; }

static void potrf(double* a) {
  for (int j = 0; j < B; ++j) {
    double d = a[j * B + j];
    for (int k = 0; k < j; ++k) d -= a[j * B + k] * a[j * B + k];
    if (d <= 0) bench_fail("cholesky: the matrix is not positive definite (pivot %g)", d);
    d = sqrt(d);
    a[j * B + j] = d;
    for (int i = j + 1; i < B; ++i) {
      double s = a[i * B + j];
      for (int k = 0; k < j; ++k) s -= a[i * B + k] * a[j * B + k];
      a[i * B + j] = s / d;
    }
    for (int k = j + 1; k < B; ++k) a[j * B + k] = 0;
  }
}
/* b := b L^-T (L: the factored diagonal tile). */
static void trsm(const double* l, double* b) {
  for (int i = 0; i < B; ++i)
    for (int j = 0; j < B; ++j) {
      double s = b[i * B + j];
      for (int k = 0; k < j; ++k) s -= b[i * B + k] * l[j * B + k];
      b[i * B + j] = s / l[j * B + j];
    }
}
/* c := c - a b^T */
static void gemm(const double* a, const double* b, double* c) {
  for (int i = 0; i < B; ++i)
    for (int j = 0; j < B; ++j) {
      double s = 0;
      for (int k = 0; k < B; ++k) s += a[i * B + k] * b[j * B + k];
      c[i * B + j] -= s;
    }
}
/* c := c - a a^T (the whole tile: the upper half of a diagonal tile is
 * never read) */
static void syrk(const double* a, double* c) { gemm(a, a, c); }

static void load(void) {
  for (long i = 0; i < nt; ++i)
    for (long j = 0; j <= i; ++j)
      for (int r = 0; r < B; ++r)
        memcpy(T(tiles, i, j) + r * B, orig + (i * B + r) * n + j * B, B * sizeof(double));
}

static void run(void* ctx) {
  (void)ctx;
  load();
  double* m = tiles;
#pragma omp parallel
#pragma omp single
  for (long k = 0; k < nt; ++k) {
    double* akk = T(m, k, k);
#pragma omp task depend(inout : akk[0])
    potrf(akk);
    for (long i = k + 1; i < nt; ++i) {
      double* aik = T(m, i, k);
#pragma omp task depend(in : akk[0]) depend(inout : aik[0])
      trsm(akk, aik);
    }
    for (long i = k + 1; i < nt; ++i) {
      double* aik = T(m, i, k);
      double* aii = T(m, i, i);
#pragma omp task depend(in : aik[0]) depend(inout : aii[0])
      syrk(aik, aii);
      for (long j = k + 1; j < i; ++j) {
        double* ajk = T(m, j, k);
        double* aij = T(m, i, j);
#pragma omp task depend(in : aik[0], ajk[0]) depend(inout : aij[0])
        gemm(aik, ajk, aij);
      }
    }
  }
}

static double L(long i, long j) { return j > i ? 0 : T(tiles, i / B, j / B)[(i % B) * B + j % B]; }

static char err[160];
static const char* check(void* ctx) {
  (void)ctx;
  for (int s = 0; s < 256; ++s) {
    long i = (long)(bench_mix(3 * (uint64_t)s) % (uint64_t)n), j = (long)(bench_mix(3 * (uint64_t)s + 1) % (uint64_t)n);
    if (j > i) { const long t = i; i = j; j = t; }
    double v = 0, mag = 0;
    for (long k = 0; k <= j; ++k) {
      v += L(i, k) * L(j, k);
      mag += fabs(L(i, k) * L(j, k));
    }
    const double want = orig[i * n + j];
    if (!isfinite(v) || fabs(v - want) > 1e-9 * (1 + mag)) {
      snprintf(err, sizeof err, "(L L^T)(%ld, %ld) = %.17g, expected %.17g", i, j, v, want);
      return err;
    }
  }
  return NULL;
}

int main(int argc, char** argv) {
  bench_args a = bench_parse(argc, argv);
  n = a.n ? a.n : 1024;
  if (n < B || n % B) bench_fail("cholesky: -n %ld is not a positive multiple of %d", n, B);
  nt = n / B;
  orig = malloc((size_t)(n * n) * sizeof(double));
  tiles = calloc((size_t)(nt * nt * B * B), sizeof(double));
  if (!orig || !tiles) bench_fail("cholesky: cannot allocate a %ld x %ld matrix", n, n);
  /* symmetric, entries in [-1, 1], diagonal n: positive definite (diagonally dominant) */
  for (long i = 0; i < n; ++i)
    for (long j = 0; j <= i; ++j) {
      const double v = i == j ? (double)n : (double)(bench_mix((uint64_t)(i * n + j)) % 2001) / 1000.0 - 1.0;
      orig[i * n + j] = orig[j * n + i] = v;
    }
  bench_measure(&a, "cholesky", a.threads, 1, "run", run, check, NULL);
  return 0;
}
