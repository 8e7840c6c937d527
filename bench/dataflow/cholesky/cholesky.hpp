// Tiled Cholesky (lower, A = L L^T) shared by every competitor: the matrix
// in tiles (nt x nt tiles of nb x nb doubles, each tile contiguous and
// column-major, as PLASMA stores them), the four tile kernels as calls to
// OpenBLAS (dpotrf, dtrsm, dsyrk, dgemm) running on one thread each, the
// test matrix and the checks. Compiled once (kernels.cpp, by this compiler)
// and linked into every variant, so that the tables compare runtimes, not
// compilers or BLAS builds.
//
// Every variant links OpenBLAS's pthreads build, the task-based ones set to
// one thread (blas_threads(1)): Debian's sequential build (openblas-serial,
// "SINGLE_THREADED", built without USE_LOCKING) is not safe to call from
// several threads at once -- with two workers, 16 of 40 runs of the libgomp
// Cholesky (1024, tile 64) gave a wrong factor -- while the pthreads build
// at one thread runs each call on the caller, under its own locks (0 of 40).
//
// The algorithm every runtime runs (right-looking, tile k):
//   potrf(A[k][k])                                       RW A[k][k]
//   trsm(A[k][k], A[i][k])             i > k             R A[k][k], RW A[i][k]
//   syrk(A[i][k], A[i][i])             i > k             R A[i][k], RW A[i][i]
//   gemm(A[i][k], A[j][k], A[i][j])    i > j > k         R A[i][k], A[j][k], RW A[i][j]
// n^3/3 flops in all (the figure GFLOP/s is computed from).
#pragma once
#include <cstddef>
#include <memory>

#include "common.hpp"

namespace bench::chol {

struct Size {
  long n;   // matrix order
  long nb;  // tile order
  long nt;  // tiles per side
};

// 4096 / 256 by default, 256 / 64 for --smoke; the order must be a multiple
// of the tile (an error otherwise).
Size size(const df::Args& a, const char* prog);

inline double flops(const Size& s) { return static_cast<double>(s.n) * s.n * s.n / 3.0; }

// A matrix stored tile by tile (only the lower triangle's tiles are used).
class Tiled {
 public:
  explicit Tiled(const Size& s);
  double* tile(long i, long j) { return data_.get() + (i * s_.nt + j) * s_.nb * s_.nb; }
  const double* tile(long i, long j) const { return data_.get() + (i * s_.nt + j) * s_.nb * s_.nb; }
  const Size& size() const { return s_; }
  void copy_from(const Tiled& other);

 private:
  Size s_;
  std::unique_ptr<double[]> data_;
};

// A symmetric positive definite test matrix (random entries in [0, 1), n
// added on the diagonal: well conditioned), the same for every run.
void make_spd(Tiled& a);
// Full column-major copies, for the whole-matrix dpotrf of threaded OpenBLAS.
void to_full(const Tiled& a, double* full);
void from_full(const double* full, Tiled& a);

// LAPACK's dpotrf (lower) on an n x n column-major matrix with leading
// dimension lda, through OpenBLAS's Fortran interface (dpotrf_: Debian's
// OpenBLAS has no LAPACKE, and the reference LAPACKE would pull in the
// system's default liblapack.so.3, possibly a second, threaded OpenBLAS);
// returns LAPACK's info (0: done; k > 0: the leading minor k is not
// positive definite).
int dpotrf_lower(double* a, long n, long lda);

// OpenBLAS's thread count (openblas_set_num_threads): 1 for the task kernels,
// -t for the whole-matrix dpotrf.
void blas_threads(int threads);

// The tile kernels (sequential OpenBLAS calls).
void potrf(double* akk, long nb);
void trsm(const double* akk, double* aik, long nb);
void syrk(const double* aik, double* aii, long nb);
void gemm(const double* aik, const double* ajk, double* aij, long nb);

// The whole factorization, tile after tile, without a runtime.
void factor_sequential(Tiled& a);

// Tile (i, j) of an n x n column-major matrix (lda = n), and dpotrf on the
// diagonal tile (k, k) there (the lookahead variant: lookahead.hpp).
double* full_tile(double* full, long n, long nb, long i, long j);
void full_potrf(double* full, long n, long nb, long k);

// Checks that l (the factor, lower triangle) factors a: a solve with a known
// solution (O(n^2), every run), and with `full` also the residual
// ||A - L L^T||_F / ||A||_F (O(n^3), --smoke sizes). Exits 1 on failure.
void check(const char* prog, const Tiled& a, const Tiled& l, bool full);

// A run: restore the matrix (untimed), time factor(), check the result.
template <class Factor>
void run(const df::Args& a, const char* prog, const char* impl, Factor&& factor) {
  blas_threads(1);
  const Size s = size(a, prog);
  Tiled pristine(s), m(s);
  make_spd(pristine);
  df::measure_timed(a, "cholesky", impl, flops(s), "flop", [&] {
    m.copy_from(pristine);
    const double t0 = bench::now();
    factor(m);
    const double t = bench::now() - t0;
    check(prog, pristine, m, a.smoke);
    return t;
  });
}

// A run on `full` (n x n doubles, the caller's, so that it can register it
// once): copy the matrix there in column-major form (untimed), time
// factor(full, size), copy back and check.
template <class Factor>
void run_full(const df::Args& a, const char* prog, const char* impl, double* full, Factor&& factor) {
  blas_threads(1);
  const Size s = size(a, prog);
  Tiled pristine(s), m(s);
  make_spd(pristine);
  df::measure_timed(a, "cholesky", impl, flops(s), "flop", [&] {
    to_full(pristine, full);
    const double t0 = bench::now();
    factor(full, s);
    const double t = bench::now() - t0;
    from_full(full, m);
    check(prog, pristine, m, a.smoke);
    return t;
  });
}

}  // namespace bench::chol
