// 2D Jacobi with an OpenMP `for` (static schedule: each thread gets the same
// rows every sweep), inside one parallel region per repetition. The loop
// runs over one block of rows per thread, so that the kernel is called once
// per thread and sweep, as in the other variants.
#include <omp.h>

#include <utility>

#include "driver.hpp"
#include "jacobi/jacobi.hpp"

#ifndef IMPL
#define IMPL "omp"
#endif

int main(int argc, char** argv) {
  const bench::Args a = bench::parse_args(argc, argv);
  const long n = a.n ? a.n : 512;
  const int sweeps = 100;
  omp_set_num_threads(a.threads);
  bench::Grid g(n);
  bench::measure(a, "jacobi", IMPL, sweeps, "sweep", [&] {
    double* pa = g.a.data();
    double* pb = g.b.data();
#pragma omp parallel firstprivate(pa, pb)
    {
      const long blocks = omp_get_num_threads();
      const long rows = n - 2;
      for (int s = 0; s < sweeps; ++s) {
#pragma omp for schedule(static)
        for (long k = 0; k < blocks; ++k)
          bench::jacobi_rows(pa, pb, n, 1 + rows * k / blocks, 1 + rows * (k + 1) / blocks);
        std::swap(pa, pb);
      }
    }
    if (sweeps % 2) std::swap(g.a, g.b);
  });
  bench::keep(g.a[n + 1]);
}
