// The tiled Cholesky with canopy's data-flow tasks: one data handle per tile
// of the lower triangle (registered once: the tiles do not move between
// runs), one canopy::submit per kernel with the accesses of cholesky.hpp;
// submission on worker 0 inside Runtime::run, then canopy::wait_all.
// Then the lookahead variant ("canopy-la", lookahead.hpp): the same plan as
// "<impl>-la" of omp.cpp.
#include <canopy/data.hpp>
#include <canopy/dataflow.hpp>
#include <canopy/runtime.hpp>

#include <memory>
#include <span>
#include <vector>

#include "cholesky/cholesky.hpp"
#include "cholesky/lookahead.hpp"

int main(int argc, char** argv) {
  const bench::df::Args a = bench::df::parse_args(argc, argv);
  canopy::RuntimeOptions o = canopy::RuntimeOptions::from_env();
  o.num_threads = a.threads;
  canopy::Runtime rt(o);
  bench::chol::blas_threads(1);  // each task's kernel on its worker (run.py also sets OPENBLAS_NUM_THREADS=1)
  const bench::chol::Size s = bench::chol::size(a, argv[0]);
  const long nt = s.nt, nb = s.nb;
  bench::chol::Tiled pristine(s), m(s);
  bench::chol::make_spd(pristine);
  std::vector<canopy::Data> h(static_cast<std::size_t>(nt * nt));
  for (long i = 0; i < nt; ++i)
    for (long j = 0; j <= i; ++j) h[i * nt + j] = canopy::data_register(m.tile(i, j), sizeof(double) * nb * nb);
  bench::df::measure_timed(a, "cholesky", "canopy", bench::chol::flops(s), "flop", [&] {
    m.copy_from(pristine);
    const double t0 = bench::now();
    rt.run([&] {
      auto H = [&](long i, long j) { return h[i * nt + j]; };
      for (long k = 0; k < nt; ++k) {
        double* akk = m.tile(k, k);
        canopy::submit({canopy::read_write(H(k, k))}, [akk, nb] { bench::chol::potrf(akk, nb); });
        for (long i = k + 1; i < nt; ++i) {
          double* aik = m.tile(i, k);
          canopy::submit({canopy::read(H(k, k)), canopy::read_write(H(i, k))},
                         [akk, aik, nb] { bench::chol::trsm(akk, aik, nb); });
        }
        for (long i = k + 1; i < nt; ++i) {
          double* aik = m.tile(i, k);
          double* aii = m.tile(i, i);
          canopy::submit({canopy::read(H(i, k)), canopy::read_write(H(i, i))},
                         [aik, aii, nb] { bench::chol::syrk(aik, aii, nb); });
          for (long j = k + 1; j < i; ++j) {
            double* ajk = m.tile(j, k);
            double* aij = m.tile(i, j);
            canopy::submit({canopy::read(H(i, k)), canopy::read(H(j, k)), canopy::read_write(H(i, j))},
                           [aik, ajk, aij, nb] { bench::chol::gemm(aik, ajk, aij, nb); });
          }
        }
      }
      canopy::wait_all();
    });
    const double t = bench::now() - t0;
    bench::chol::check(argv[0], pristine, m, a.smoke);
    return t;
  });
  for (long i = 0; i < nt; ++i)
    for (long j = 0; j <= i; ++j) canopy::data_free(h[i * nt + j]);

  // The lookahead variant (lookahead.hpp) on the whole column-major matrix:
  // a handle per tile of the lower triangle, registered over the tile's first
  // column (a tile of a column-major matrix is not one contiguous region; the
  // handles only order the tasks here, on one NUMA node).
  const long n = s.n;
  std::unique_ptr<double[]> full(new double[static_cast<std::size_t>(n * n)]);
  double* f = full.get();
  for (long i = 0; i < nt; ++i)
    for (long j = 0; j <= i; ++j)
      h[i * nt + j] = canopy::data_register(bench::chol::full_tile(f, n, nb, i, j), sizeof(double) * nb);
  std::vector<double> inverses(static_cast<std::size_t>(s.nt * s.nb * s.nb));
  double* inv = inverses.data();
  const std::vector<bench::chol::la::Task> plan = bench::chol::la::plan(s, bench::chol::la::cuts_for(a.threads));
  bench::chol::run_full(a, argv[0], "canopy-la", f, [&](double*, const bench::chol::Size&) {
    rt.run([&] {
      std::vector<canopy::Access> acc;
      for (const bench::chol::la::Task& t : plan) {
        acc.clear();
        for (long id : t.reads) acc.push_back(canopy::read(h[id]));
        for (long id : t.writes) acc.push_back(canopy::read_write(h[id]));
        const bench::chol::la::Task* tp = &t;
        canopy::submit(std::span<const canopy::Access>(acc),
                       [f, inv, &s, tp] { bench::chol::la::execute(f, inv, s, *tp); });
      }
      canopy::wait_all();
    });
  });
  for (long i = 0; i < nt; ++i)
    for (long j = 0; j <= i; ++j) canopy::data_free(h[i * nt + j]);
}
