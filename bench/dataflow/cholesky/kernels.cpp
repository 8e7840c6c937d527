// The tile kernels, the test matrix and the checks of the tiled Cholesky
// (cholesky.hpp), over OpenBLAS's CBLAS and LAPACK (dpotrf_) interfaces. With
// OpenBLAS at one thread, each task's kernel runs on the worker that runs
// the task, and the runtime alone decides the parallelism.
#include "cholesky/cholesky.hpp"

#include <cblas.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

// OpenBLAS's LAPACK entry point (Fortran calling convention: every
// argument by address, the hidden length of the character argument last).
extern "C" void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, std::size_t uplo_len);

namespace bench::chol {

int dpotrf_lower(double* a, long n, long lda) {
  const char uplo = 'L';
  const int nn = static_cast<int>(n), ld = static_cast<int>(lda);
  int info = 0;
  dpotrf_(&uplo, &nn, a, &ld, &info, 1);
  return info;
}

void blas_threads(int threads) { openblas_set_num_threads(threads); }

Size size(const df::Args& a, const char* prog) {
  Size s;
  s.n = a.n ? a.n : (a.smoke ? 256 : 4096);
  s.nb = a.tile ? a.tile : (a.smoke ? 64 : 256);
  if (s.n % s.nb != 0) {
    std::fprintf(stderr, "%s: matrix order %ld is not a multiple of the tile %ld\n", prog, s.n, s.nb);
    std::exit(2);
  }
  s.nt = s.n / s.nb;
  return s;
}

Tiled::Tiled(const Size& s)
    : s_(s), data_(new double[static_cast<std::size_t>(s.nt * s.nt * s.nb * s.nb)]) {}

void Tiled::copy_from(const Tiled& other) {
  std::memcpy(data_.get(), other.data_.get(), sizeof(double) * static_cast<std::size_t>(s_.n * s_.n));
}

namespace {

// Element (r, c) of a tiled matrix.
inline double& at(Tiled& a, long r, long c) {
  const long nb = a.size().nb;
  return a.tile(r / nb, c / nb)[(c % nb) * nb + r % nb];
}
inline double at(const Tiled& a, long r, long c) {
  const long nb = a.size().nb;
  return a.tile(r / nb, c / nb)[(c % nb) * nb + r % nb];
}

}  // namespace

void make_spd(Tiled& a) {
  const long n = a.size().n;
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (long c = 0; c < n; ++c)
    for (long r = c; r < n; ++r) {
      const double x = u(rng) + (r == c ? static_cast<double>(n) : 0.0);
      at(a, r, c) = x;
      at(a, c, r) = x;
    }
}

void to_full(const Tiled& a, double* full) {
  const long n = a.size().n;
  for (long c = 0; c < n; ++c)
    for (long r = 0; r < n; ++r) full[c * n + r] = at(a, r, c);
}

void from_full(const double* full, Tiled& a) {
  const long n = a.size().n;
  for (long c = 0; c < n; ++c)
    for (long r = 0; r < n; ++r) at(a, r, c) = full[c * n + r];
}

void potrf(double* akk, long nb) {
  const int info = dpotrf_lower(akk, nb, nb);
  if (info != 0) df::fail("cholesky", "dpotrf of a diagonal tile returned " + std::to_string(info));
}

void trsm(const double* akk, double* aik, long nb) {
  const int b = static_cast<int>(nb);
  cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, b, b, 1.0, akk, b, aik, b);
}

void syrk(const double* aik, double* aii, long nb) {
  const int b = static_cast<int>(nb);
  cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, b, b, -1.0, aik, b, 1.0, aii, b);
}

void gemm(const double* aik, const double* ajk, double* aij, long nb) {
  const int b = static_cast<int>(nb);
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, b, b, b, -1.0, aik, b, ajk, b, 1.0, aij, b);
}

double* full_tile(double* full, long n, long nb, long i, long j) { return full + j * nb * n + i * nb; }

void full_potrf(double* full, long n, long nb, long k) {
  const int info = dpotrf_lower(full_tile(full, n, nb, k, k), nb, n);
  if (info != 0) df::fail("cholesky", "dpotrf of a diagonal tile returned " + std::to_string(info));
}

void factor_sequential(Tiled& a) {
  const long nt = a.size().nt, nb = a.size().nb;
  for (long k = 0; k < nt; ++k) {
    potrf(a.tile(k, k), nb);
    for (long i = k + 1; i < nt; ++i) trsm(a.tile(k, k), a.tile(i, k), nb);
    for (long i = k + 1; i < nt; ++i) {
      syrk(a.tile(i, k), a.tile(i, i), nb);
      for (long j = k + 1; j < i; ++j) gemm(a.tile(i, k), a.tile(j, k), a.tile(i, j), nb);
    }
  }
}

void check(const char* prog, const Tiled& a, const Tiled& l, bool full) {
  const long n = a.size().n;
  // Solve L L^T x = A x0 for a known x0.
  std::vector<double> x0(static_cast<std::size_t>(n)), b(static_cast<std::size_t>(n), 0.0);
  for (long i = 0; i < n; ++i) x0[i] = 1.0 + static_cast<double>(i % 7);
  for (long c = 0; c < n; ++c)
    for (long r = 0; r < n; ++r) b[r] += at(a, r, c) * x0[c];
  for (long c = 0; c < n; ++c) {  // forward: L y = b (column-oriented)
    b[c] /= at(l, c, c);
    for (long r = c + 1; r < n; ++r) b[r] -= at(l, r, c) * b[c];
  }
  for (long r = n - 1; r >= 0; --r) {  // backward: L^T x = y
    double s = b[r];
    for (long k = r + 1; k < n; ++k) s -= at(l, k, r) * b[k];
    b[r] = s / at(l, r, r);
  }
  double err = 0, norm = 0;
  for (long i = 0; i < n; ++i) {
    err = std::max(err, std::fabs(b[i] - x0[i]));
    norm = std::max(norm, std::fabs(x0[i]));
  }
  if (!(err <= 1e-10 * norm))
    df::fail(prog, "Cholesky solve error " + std::to_string(err / norm) + " (relative, max norm), expected <= 1e-10");
  if (!full) return;
  double r2 = 0, a2 = 0;
  for (long c = 0; c < n; ++c)
    for (long r = c; r < n; ++r) {
      double s = 0;
      for (long k = 0; k <= c; ++k) s += at(l, r, k) * at(l, c, k);
      const double d = at(a, r, c) - s;
      r2 += d * d;
      a2 += at(a, r, c) * at(a, r, c);
    }
  const double res = std::sqrt(r2 / a2);
  if (!(res <= 1e-13))
    df::fail(prog, "Cholesky residual ||A - L L^T|| / ||A|| = " + std::to_string(res) + ", expected <= 1e-13");
}

}  // namespace bench::chol
