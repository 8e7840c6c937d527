/* Sparse LU with tasks (BOTS sparselu, the "single" version): an NB x NB
 * matrix of BS x BS blocks, many of them empty at the start (BOTS's pattern
 * and values, made diagonally dominant so that the factors stay finite),
 * factorised in place without pivoting; at step k one thread
 * creates a task per fwd / bdiv block, waits, then a bmod task per updated
 * block (allocating the fill-in first), and waits. Default NB = 32, BS = 32
 * (-n sets NB). Checked: the factors equal those of the same algorithm run
 * sequentially (every block sees the same operations in the same order, so
 * they agree to rounding; tolerance 1e-9 relative). */
#include <math.h>

#include "omp_bench.h"

#define BS 32

typedef double block[BS * BS];

static int nb;
static double** A;      /* nb * nb block pointers, NULL: empty */
static block* pool;     /* nb * nb blocks of storage */
static double** ref;    /* the sequential factors */
static block* refpool;

static void genmat(double** m, block* store) {
  int init = 1325;
  for (int ii = 0; ii < nb; ++ii)
    for (int jj = 0; jj < nb; ++jj) {
      int null = 0;
      if (ii < jj && ii % 3 != 0) null = 1;
      if (ii > jj && jj % 3 != 0) null = 1;
      if (ii % 2 == 1) null = 1;
      if (jj % 2 == 1) null = 1;
      if (ii == jj || ii == jj - 1 || ii - 1 == jj) null = 0;
      double* b = store[ii * nb + jj];
      if (null) {
        m[ii * nb + jj] = NULL;
        continue;
      }
      m[ii * nb + jj] = b;
      for (int k = 0; k < BS * BS; ++k) {
        init = (3125 * init) % 65536;
        b[k] = (init - 32768.0) / 16384.0;
        /* diagonally dominant (BOTS's matrix is not: without pivoting its
           factors overflow to inf / NaN, which no comparison would catch) */
        if (ii == jj && k / BS == k % BS) b[k] += 2.0 * BS * nb + 1;
      }
    }
}

static void lu0(double* d) {
  for (int k = 0; k < BS; ++k)
    for (int i = k + 1; i < BS; ++i) {
      d[i * BS + k] /= d[k * BS + k];
      for (int j = k + 1; j < BS; ++j) d[i * BS + j] -= d[i * BS + k] * d[k * BS + j];
    }
}
static void fwd(const double* d, double* c) {
  for (int k = 0; k < BS; ++k)
    for (int i = k + 1; i < BS; ++i)
      for (int j = 0; j < BS; ++j) c[i * BS + j] -= d[i * BS + k] * c[k * BS + j];
}
static void bdiv(const double* d, double* r) {
  for (int i = 0; i < BS; ++i)
    for (int k = 0; k < BS; ++k) {
      r[i * BS + k] /= d[k * BS + k];
      for (int j = k + 1; j < BS; ++j) r[i * BS + j] -= r[i * BS + k] * d[k * BS + j];
    }
}
static void bmod(const double* row, const double* col, double* inner) {
  for (int i = 0; i < BS; ++i)
    for (int k = 0; k < BS; ++k)
      for (int j = 0; j < BS; ++j) inner[i * BS + j] -= row[i * BS + k] * col[k * BS + j];
}

static double* fill_in(double** m, block* store, int ii, int jj) {
  double* b = store[ii * nb + jj];
  memset(b, 0, sizeof(block));
  return m[ii * nb + jj] = b;
}

static void lu_seq(double** m, block* store) {
  for (int kk = 0; kk < nb; ++kk) {
    lu0(m[kk * nb + kk]);
    for (int jj = kk + 1; jj < nb; ++jj)
      if (m[kk * nb + jj]) fwd(m[kk * nb + kk], m[kk * nb + jj]);
    for (int ii = kk + 1; ii < nb; ++ii)
      if (m[ii * nb + kk]) bdiv(m[kk * nb + kk], m[ii * nb + kk]);
    for (int ii = kk + 1; ii < nb; ++ii)
      if (m[ii * nb + kk])
        for (int jj = kk + 1; jj < nb; ++jj)
          if (m[kk * nb + jj]) {
            double* t = m[ii * nb + jj] ? m[ii * nb + jj] : fill_in(m, store, ii, jj);
            bmod(m[ii * nb + kk], m[kk * nb + jj], t);
          }
  }
}

static void lu_tasks(void) {
#pragma omp parallel
#pragma omp single
  for (int kk = 0; kk < nb; ++kk) {
    lu0(A[kk * nb + kk]);
    for (int jj = kk + 1; jj < nb; ++jj)
      if (A[kk * nb + jj]) {
#pragma omp task firstprivate(kk, jj)
        fwd(A[kk * nb + kk], A[kk * nb + jj]);
      }
    for (int ii = kk + 1; ii < nb; ++ii)
      if (A[ii * nb + kk]) {
#pragma omp task firstprivate(kk, ii)
        bdiv(A[kk * nb + kk], A[ii * nb + kk]);
      }
#pragma omp taskwait
    for (int ii = kk + 1; ii < nb; ++ii)
      if (A[ii * nb + kk])
        for (int jj = kk + 1; jj < nb; ++jj)
          if (A[kk * nb + jj]) {
            if (!A[ii * nb + jj]) fill_in(A, pool, ii, jj);
#pragma omp task firstprivate(kk, jj, ii)
            bmod(A[ii * nb + kk], A[kk * nb + jj], A[ii * nb + jj]);
          }
#pragma omp taskwait
  }
}

static void run(void* ctx) {
  (void)ctx;
  genmat(A, pool);  /* the same input every run (sequential, ~2% of the time) */
  lu_tasks();
}
static char err[200];
static const char* check(void* ctx) {
  (void)ctx;
  for (int b = 0; b < nb * nb; ++b) {
    if (!A[b] != !ref[b]) {
      snprintf(err, sizeof err, "block (%d, %d) is %s, expected %s", b / nb, b % nb, A[b] ? "filled" : "empty",
               ref[b] ? "filled" : "empty");
      return err;
    }
    if (!A[b]) continue;
    for (int k = 0; k < BS * BS; ++k)
      if (!isfinite(A[b][k]) || fabs(A[b][k] - ref[b][k]) > 1e-9 * (1 + fabs(ref[b][k]))) {
        snprintf(err, sizeof err, "block (%d, %d) element %d is %.17g, expected %.17g", b / nb, b % nb, k, A[b][k],
                 ref[b][k]);
        return err;
      }
  }
  return NULL;
}

int main(int argc, char** argv) {
  bench_args a = bench_parse(argc, argv);
  nb = a.n ? (int)a.n : 32;
  if (nb < 1 || nb > 1000) bench_fail("sparselu: -n %d blocks is outside 1..1000", nb);
  A = calloc((size_t)nb * nb, sizeof(double*));
  ref = calloc((size_t)nb * nb, sizeof(double*));
  pool = malloc((size_t)nb * nb * sizeof(block));
  refpool = malloc((size_t)nb * nb * sizeof(block));
  if (!A || !ref || !pool || !refpool) bench_fail("sparselu: cannot allocate %d x %d blocks", nb, nb);
  genmat(ref, refpool);
  lu_seq(ref, refpool);
  for (int b = 0; b < nb * nb; ++b)
    for (int k = 0; ref[b] && k < BS * BS; ++k)
      if (!isfinite(ref[b][k])) bench_fail("sparselu: the sequential factors are not finite (block %d)", b);
  bench_measure(&a, "sparselu", a.threads, 1, "run", run, check, NULL);
  return 0;
}
