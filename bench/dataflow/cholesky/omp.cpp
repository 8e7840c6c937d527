// The tiled Cholesky with OpenMP tasks and `depend` clauses on the first
// element of each tile, created by one thread (single); then the lookahead
// variant ("<impl>-tall", cholesky.hpp) on the whole column-major matrix,
// with `depend` on the first element of each tile there too. Built by this
// compiler (libgomp) and by clang -fopenmp=libomp (LLVM's libomp), linked
// with the same kernel object.
#include <omp.h>

#include <memory>
#include <string>

#include "cholesky/cholesky.hpp"

#ifndef IMPL
#define IMPL "omp"
#endif

int main(int argc, char** argv) {
  const bench::df::Args a = bench::df::parse_args(argc, argv);
  omp_set_num_threads(a.threads);
  bench::chol::run(a, argv[0], IMPL, [](bench::chol::Tiled& m) {
    const long nt = m.size().nt, nb = m.size().nb;
#pragma omp parallel
#pragma omp single
    for (long k = 0; k < nt; ++k) {
      double* akk = m.tile(k, k);
#pragma omp task firstprivate(akk) depend(inout : akk[0])
      bench::chol::potrf(akk, nb);
      for (long i = k + 1; i < nt; ++i) {
        double* aik = m.tile(i, k);
#pragma omp task firstprivate(akk, aik) depend(in : akk[0]) depend(inout : aik[0])
        bench::chol::trsm(akk, aik, nb);
      }
      for (long i = k + 1; i < nt; ++i) {
        double* aik = m.tile(i, k);
        double* aii = m.tile(i, i);
#pragma omp task firstprivate(aik, aii) depend(in : aik[0]) depend(inout : aii[0])
        bench::chol::syrk(aik, aii, nb);
        for (long j = k + 1; j < i; ++j) {
          double* ajk = m.tile(j, k);
          double* aij = m.tile(i, j);
#pragma omp task firstprivate(aik, ajk, aij) depend(in : aik[0], ajk[0]) depend(inout : aij[0])
          bench::chol::gemm(aik, ajk, aij, nb);
        }
      }
    }
  });
  const bench::chol::Size s = bench::chol::size(a, argv[0]);
  std::unique_ptr<double[]> full(new double[static_cast<std::size_t>(s.n * s.n)]);
  const std::string tall = std::string(IMPL) + "-tall";
  bench::chol::run_full(a, argv[0], tall.c_str(), full.get(), [](double* f, const bench::chol::Size& z) {
    const long n = z.n, nb = z.nb, nt = z.nt;
    // The dependency token of tile (i, j): its first element.
    auto T = [=](long i, long j) { return bench::chol::full_tile(f, n, nb, i, j); };
#pragma omp parallel
#pragma omp single
    for (long k = 0; k < nt; ++k) {
      [[maybe_unused]] double* akk = T(k, k);  // (the tokens are used only in depend clauses)
#pragma omp task firstprivate(k) depend(inout : akk[0])
      bench::chol::full_potrf(f, n, nb, k);
      for (long i = k + 1; i < nt; ++i) {
        [[maybe_unused]] double* aik = T(i, k);
#pragma omp task firstprivate(i, k) depend(in : akk[0]) depend(inout : aik[0])
        bench::chol::full_trsm(f, n, nb, i, k);
      }
      for (long j = k + 1; j < nt; ++j) {
        [[maybe_unused]] double* ajk = T(j, k);
        [[maybe_unused]] double* ajj = T(j, j);
#pragma omp task firstprivate(j, k) depend(in : ajk[0]) depend(inout : ajj[0])
        bench::chol::full_syrk(f, n, nb, j, k);
        if (j == k + 1) {
          for (long i = j + 1; i < nt; ++i) {
            [[maybe_unused]] double* aik = T(i, k);
            [[maybe_unused]] double* aij = T(i, j);
#pragma omp task firstprivate(i, j, k) depend(in : aik[0], ajk[0]) depend(inout : aij[0])
            bench::chol::full_gemm(f, n, nb, i, j, k, 1);
          }
        } else if (j + 1 < nt) {
          // One task for the tiles j+1..nt-1 of column j: an iterator
          // dependence over them (OpenMP 5.0).
          const long tiles = nt - j - 1;
#pragma omp task firstprivate(j, k, tiles) depend(in : ajk[0]) \
    depend(iterator(it = j + 1 : nt), in : f[k * nb * n + it * nb]) \
    depend(iterator(it = j + 1 : nt), inout : f[j * nb * n + it * nb])
          bench::chol::full_gemm(f, n, nb, j + 1, j, k, tiles);
        }
      }
    }
  });
}
