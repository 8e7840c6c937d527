// The tiled Cholesky with OpenMP tasks and `depend` clauses on the first
// element of each tile, created by one thread (single); then the lookahead
// variant ("<impl>-la", lookahead.hpp: the same plan as canopy's) on the whole
// column-major matrix, with `depend` on the first element of each tile it
// accesses there too (iterator dependences over the plan's lists). Built by this
// compiler (libgomp) and by clang -fopenmp=libomp (LLVM's libomp), linked
// with the same kernel object.
#include <omp.h>

#include <memory>
#include <string>
#include <vector>

#include "cholesky/cholesky.hpp"
#include "cholesky/lookahead.hpp"

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
  // The lookahead plan (lookahead.hpp), each task's dependencies as the
  // element offsets of the first elements of the tiles it accesses.
  std::vector<double> inverses(static_cast<std::size_t>(s.nt * s.nb * s.nb));
  double* inv = inverses.data();
  const std::vector<bench::chol::la::Task> plan = bench::chol::la::plan(s, bench::chol::la::cuts_for(a.threads));
  std::vector<std::vector<long>> in(plan.size()), inout(plan.size());
  for (std::size_t t = 0; t < plan.size(); ++t) {
    for (long id : plan[t].reads) in[t].push_back(bench::chol::la::offset(s, id));
    for (long id : plan[t].writes) inout[t].push_back(bench::chol::la::offset(s, id));
  }
  const std::string la = std::string(IMPL) + "-la";
  bench::chol::run_full(a, argv[0], la.c_str(), full.get(), [&](double* f, const bench::chol::Size& z) {
#pragma omp parallel
#pragma omp single
    for (std::size_t t = 0; t < plan.size(); ++t) {
      const bench::chol::la::Task* tp = &plan[t];
      const long* rd = in[t].data();
      const long* wr = inout[t].data();
      const long nr = static_cast<long>(in[t].size()), nw = static_cast<long>(inout[t].size());
#pragma omp task firstprivate(tp) depend(iterator(it = 0 : nr), in : f[rd[it]]) \
    depend(iterator(it = 0 : nw), inout : f[wr[it]])
      bench::chol::la::execute(f, inv, z, *tp);
    }
  });
}
