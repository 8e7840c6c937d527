// 2D Jacobi with OpenMP, two ways:
//  - "<impl>-for": a `for` with a static schedule over one block of rows per
//    thread, one parallel region per run (each thread sweeps the same rows
//    every time: the usual OpenMP code, and the fastest);
//  - "<impl>-depend": one task per row block and sweep, depend(in) on the
//    block and its two neighbours of the previous grid, depend(out) on the
//    block of the next one (the same graph as the canopy variant), all
//    sweeps submitted by one thread before one wait.
// Built by this compiler (libgomp) and by clang -fopenmp=libomp (libomp).
#include <omp.h>

#include <string>
#include <vector>

#include "jacobi2d/jacobi2d.hpp"

#ifndef IMPL
#define IMPL "omp"
#endif

int main(int argc, char** argv) {
  const bench::df::Args a = bench::df::parse_args(argc, argv);
  omp_set_num_threads(a.threads);
  const std::string for_name = std::string(IMPL) + "-for", depend_name = std::string(IMPL) + "-depend";
  bench::jac::bench_run(a, argv[0], for_name.c_str(), [](bench::jac::Grid& g, const bench::jac::Config& c) {
    double* pa = g.a.get();
    double* pb = g.b.get();
    const long n = c.n;
#pragma omp parallel
    {
      const long blocks = omp_get_num_threads();
      for (long s = 0; s < c.sweeps; ++s) {
        const double* in = s % 2 ? pb : pa;
        double* out = s % 2 ? pa : pb;
#pragma omp for schedule(static)
        for (long k = 0; k < blocks; ++k)
          bench::jac::Grid::rows(in, out, n, 1 + (n - 2) * k / blocks, 1 + (n - 2) * (k + 1) / blocks);
      }
    }
  });
  bench::jac::bench_run(a, argv[0], depend_name.c_str(), [](bench::jac::Grid& g, const bench::jac::Config& c) {
    const long n = c.n, nb = c.blocks;
    // One dependency token per block and grid.
    std::vector<char> ta(static_cast<std::size_t>(nb)), tb(static_cast<std::size_t>(nb));
    char* pta = ta.data();
    char* ptb = tb.data();
    double* pa = g.a.get();
    double* pb = g.b.get();
#pragma omp parallel
#pragma omp single
    for (long s = 0; s < c.sweeps; ++s) {
      const double* in = s % 2 ? pb : pa;
      double* out = s % 2 ? pa : pb;
      // Used only in depend clauses (GCC calls them unused).
      [[maybe_unused]] char* tin = s % 2 ? ptb : pta;
      [[maybe_unused]] char* tout = s % 2 ? pta : ptb;
      for (long k = 0; k < nb; ++k) {
        const long lo = bench::jac::block_begin(c, k), hi = bench::jac::block_begin(c, k + 1);
        if (nb == 1) {
#pragma omp task firstprivate(in, out, lo, hi) depend(in : tin[k]) depend(out : tout[k])
          bench::jac::Grid::rows(in, out, n, lo, hi);
        } else if (k == 0) {
#pragma omp task firstprivate(in, out, lo, hi) depend(in : tin[k], tin[k + 1]) depend(out : tout[k])
          bench::jac::Grid::rows(in, out, n, lo, hi);
        } else if (k == nb - 1) {
#pragma omp task firstprivate(in, out, lo, hi) depend(in : tin[k - 1], tin[k]) depend(out : tout[k])
          bench::jac::Grid::rows(in, out, n, lo, hi);
        } else {
#pragma omp task firstprivate(in, out, lo, hi) depend(in : tin[k - 1], tin[k], tin[k + 1]) depend(out : tout[k])
          bench::jac::Grid::rows(in, out, n, lo, hi);
        }
      }
    }
  });
}
