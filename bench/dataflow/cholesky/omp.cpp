// The tiled Cholesky with OpenMP tasks and `depend` clauses on the first
// element of each tile, created by one thread (single). Built by this
// compiler (libgomp) and by clang -fopenmp=libomp (LLVM's libomp), linked
// with the same kernel object.
#include <omp.h>

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
}
